"""Linking the PTX of a program built with relocatable device code (`-rdc=true`).

With separate compilation each translation unit's fat binary holds its own PTX,
and nvlink's device link produces one linked binary holding SASS only. The
program registers that linked binary; its wrapper (version 2) also points at the
translation units' own ("prelinked") fat binaries, which is where CUDA's driver
finds PTX to JIT-link when the linked SASS does not fit the GPU. tlpsim does the
same: it links the units' PTX into one module, so a kernel can call a
`__device__` function of another unit and every unit sees the same
`__device__` variables.

The link works on the top-level items of each module (directives, variable and
function declarations and definitions):

* one `.version` (the newest) / `.target` / `.address_size` header;
* `.file` indices renumbered per unit, and the `.loc` lines with them;
* an `.extern` declaration of something another unit defines is dropped (a
  function's becomes a forward declaration), as are repeated declarations;
* a `.weak` definition (inline functions, template instances) is kept once;
* internal (non-`.visible`) names defined by several units are renamed in the
  later units, as a linker keeps file-local symbols apart;
* function declarations come first, then variables, then function bodies, so
  every name is declared before it is used; debug sections (-lineinfo) go last,
  their labels renamed per unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADER = (".version", ".target", ".address_size")
_LINKAGE = ("extern", "visible", "weak", "common")
_SPACES = ("global", "const", "shared", "local", "tex", "surf", "sampler", "texref", "surfref", "samplerref")
_FUNC = re.compile(r"^((?:\.\w+\s+)*)\.(entry|func)\s*(\([^)]*\))?\s*([\w$%]+)", re.S)
_IDENT_CHARS = r"[\w$]"


class PtxLinkError(Exception):
    pass


@dataclass
class Item:
    text: str          # the item as written, comments removed
    kind: str          # "header", "file", "func", "var", "other"
    name: str = ""
    linkage: str = ""  # extern / visible / weak / common / "" (internal)
    body: bool = False  # a definition (function with a body, variable without .extern)
    entry: bool = False


def _strip_comments(text: str) -> str:
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = text.find('"', i + 1)
            j = n if j < 0 else j + 1
            out.append(text[i:j])
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_items(text: str) -> list[Item]:
    """The top-level items of one PTX module."""
    text = _strip_comments(text)
    items: list[Item] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        if text.startswith(_HEADER + (".file",), i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            line = text[i:j].strip()
            items.append(Item(line, "file" if line.startswith(".file") else "header"))
            i = j
            continue
        # a statement up to ';' at depth 0, or a block up to its matching '}'
        depth, j, in_str = 0, i, False
        while j < n:
            c = text[j]
            if in_str:
                in_str = c != '"'
            elif c == '"':
                in_str = True
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    # an initializer `= {...};` goes on to its ';'
                    k = j + 1
                    while k < n and text[k].isspace():
                        k += 1
                    if k < n and text[k] == ";":
                        j = k
                    break
            elif c == ";" and depth == 0:
                break
            j += 1
        items.append(_classify(text[i:j + 1].strip()))
        i = j + 1
    return items


def _classify(text: str) -> Item:
    m = _FUNC.match(text)
    if m is not None:
        attrs = [a.lstrip(".") for a in m.group(1).split()]
        linkage = next((a for a in attrs if a in _LINKAGE), "")
        return Item(text, "func", m.group(4), linkage, body=text.rstrip().endswith("}"), entry=m.group(2) == "entry")
    words = text.split()
    attrs = []
    for w in words:
        d = w.lstrip(".")
        if d in _LINKAGE:
            attrs.append(d)
            continue
        if d in _SPACES:
            decl = text.split("=", 1)[0].rstrip().rstrip(";").rstrip()
            decl = re.sub(r"(\[[^\]]*\]\s*)+$", "", decl).rstrip()
            name = re.findall(r"[A-Za-z_$%][\w$]*", decl)[-1]
            linkage = attrs[0] if attrs else ""
            return Item(text, "var", name, linkage, body=linkage != "extern")
        break
    return Item(text, "other")


def _rename(text: str, names: dict[str, str]) -> str:
    if not names:
        return text
    pattern = re.compile(r"(?<![\w$%.])(" + "|".join(re.escape(k) for k in sorted(names, key=len, reverse=True))
                         + r")(?!" + _IDENT_CHARS + ")")
    return pattern.sub(lambda m: names[m.group(1)], text)


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def link_ptx(texts: list[str]) -> str:
    """One PTX module from the PTX of several translation units."""
    if len(texts) == 1:
        return texts[0]
    modules = [split_items(t) for t in texts]
    version = target = address = None
    for items in modules:
        for it in items:
            if it.kind != "header":
                continue
            word, _, value = it.text.partition(" ")
            value = value.strip()
            if word == ".version" and (version is None or _version_key(value) > _version_key(version)):
                version = value
            elif word == ".target":
                if target is not None and value != target:
                    raise PtxLinkError(f"the units were compiled for different targets ({target}, {value})")
                target = value
            elif word == ".address_size":
                address = value
    # what each unit defines
    defined: dict[str, tuple[int, Item]] = {}
    renames: list[dict[str, str]] = [{} for _ in modules]
    for k, items in enumerate(modules):
        for it in items:
            if it.kind not in ("func", "var") or not it.body:
                continue
            first = defined.get(it.name)
            if first is None:
                defined[it.name] = (k, it)
            elif it.linkage in ("weak", "common") or first[1].linkage in ("weak", "common"):
                pass  # one copy is kept
            elif it.linkage == "":  # this unit's own symbol: renamed in this unit
                if first[0] != k:
                    renames[k][it.name] = f"{it.name}_tlpsim_u{k}"
            elif first[1].linkage == "":  # the earlier one was file-local: it moves aside
                j = first[0]
                renames[j][it.name] = f"{it.name}_tlpsim_u{j}"
                defined[it.name] = (k, it)
            else:
                raise PtxLinkError(f"'{it.name}' is defined by two translation units")
    decls: list[str] = []
    sections: list[str] = []
    variables: list[str] = []
    bodies: list[str] = []
    files: list[str] = []
    seen: set[str] = set()
    emitted: set[str] = set()
    file_base = 0
    for k, items in enumerate(modules):
        numbers = [int(x) for it in items if it.kind == "file" for x in re.findall(r"^\.file\s+(\d+)", it.text)]
        offset = file_base
        file_base += max(numbers, default=0)

        def renumber(text: str, offset: int = offset) -> str:
            if not offset:
                return text

            def bump(m: re.Match, offset: int = offset) -> str:
                return f"{m.group(1)}{int(m.group(2)) + offset}"

            return re.sub(r"((?:\.loc|inlined_at)\s+)(\d+)", bump, text)

        for it in items:
            if it.kind == "header":
                continue
            text = renumber(_rename(it.text, renames[k]))
            if k:  # labels of the debug sections (`.loc ... function_name $L__info_stringN`) are per unit
                text = re.sub(r"(\$L__\w+)", lambda m, k=k: f"{m.group(1)}_u{k}", text)
            if it.kind == "file":
                number = int(re.match(r"^\.file\s+(\d+)", text).group(1))
                files.append(re.sub(r"^\.file\s+\d+", f".file\t{number + offset}", text))
                continue
            name = renames[k].get(it.name, it.name)
            if it.kind == "func":
                if it.body:
                    if it.linkage in ("weak", "common") and name in emitted:
                        continue
                    emitted.add(name)
                    bodies.append(text)
                    if not it.entry:
                        decls.append(text[: text.index("{")].rstrip() + ";")
                else:
                    if it.linkage == "extern" and it.name in defined:
                        continue  # its definition's forward declaration stands in
                    if text not in seen:
                        seen.add(text)
                        decls.append(text)
            elif it.kind == "var":
                if not it.body and it.name in defined:
                    continue
                if it.body and it.linkage in ("weak", "common") and name in emitted:
                    continue
                if text in seen:
                    continue
                seen.add(text)
                emitted.add(name)
                variables.append(text)
            elif text.startswith(".section"):
                sections.append(text)
            elif text not in seen:
                seen.add(text)
                variables.append(text)
    head = [f".version {version or '7.0'}", f".target {target or 'sm_80'}", f".address_size {address or '64'}"]
    # forward declarations of every function defined here, then variables, then bodies
    return "\n\n".join(["\n".join(head), *_unique(decls), *variables, *bodies, *files, *_merge_sections(sections)]) + "\n"


def _merge_sections(sections: list[str]) -> list[str]:
    """One block per section name (`.section .debug_str { ... }` of every unit)."""
    merged: dict[str, list[str]] = {}
    for text in sections:
        head, _, rest = text.partition("{")
        merged.setdefault(" ".join(head.split()), []).append(rest[: rest.rfind("}")].strip("\n"))
    return [f"{head}\n{{\n" + "\n".join(parts) + "\n}" for head, parts in merged.items()]


def _unique(xs: list[str]) -> list[str]:
    out, seen = [], set()
    for x in xs:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out
