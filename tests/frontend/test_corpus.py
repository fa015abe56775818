"""Every kernel of the CUDA corpus compiles with the pinned nvcc, parses, and has a
well-formed CFG with a reconvergence point for every branch."""

from collections import Counter
from pathlib import Path

import pytest

from tlpsim.analysis.kernel_cfg import EXIT, kernel_cfg, reconvergence_points
from tlpsim.frontend.loader import load_program

CORPUS = sorted((Path(__file__).resolve().parent.parent / "corpus").glob("*.cu"))


@pytest.fixture(scope="module")
def programs():
    return {p.name: load_program(p, arch="sm_80") for p in CORPUS}


def test_corpus_size():
    assert len(CORPUS) >= 30


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_compiles_parses_and_reconverges(path, programs):
    prog = programs[path.name]
    assert prog.kernels, "no kernels"
    for name, fn in prog.module.functions.items():
        if fn.is_declaration:
            continue
        if fn.is_entry:
            assert name in prog.resources and prog.resources[name].registers > 0
        cfg = kernel_cfg(fn)
        assert cfg.entry == 0
        n = len(fn.instructions)
        for br, rp in reconvergence_points(fn).items():
            assert fn.instructions[br].is_branch
            assert rp == EXIT or 0 <= rp < n
            if rp != EXIT:
                # the reconvergence block post-dominates the branch block
                pdom = cfg.post_dominators()[fn.instructions[br].block]
                assert fn.instructions[rp].block in pdom
        for ins in fn.instructions:
            assert ins.line > 0 or ins.synthetic


def test_corpus_covers_the_constructs(programs):
    ops = Counter()
    spaces = Counter()
    for prog in programs.values():
        for fn in prog.module.functions.values():
            for ins in fn.instructions:
                ops[ins.base] += 1
                ops[ins.opcode] += 1
                if ins.space:
                    spaces[ins.space] += 1
    for base in ("atom", "red", "shfl", "vote", "bar", "call", "ld", "st", "cvt", "mad", "fma", "div", "ex2",
                 "lg2", "sin", "cos", "rcp", "sqrt", "rsqrt", "bfe", "bfi", "prmt", "popc", "clz", "brev", "selp",
                 "min", "max", "mul", "setp", "bra", "ret", "shf", "lop3", "match", "redux", "activemask"):
        assert ops[base] > 0, f"corpus never uses {base}"
    for space in ("global", "shared", "local", "const", "param"):
        assert spaces[space] > 0, f"corpus never touches .{space}"
    assert any(op.startswith("ld.global.nc.v4") for op in ops), "no 128-bit non-coherent vector load"
    assert any(op.startswith("atom.global.add.f32") or op.startswith("red.global.add.f32") for op in ops)
    assert any(fn.variables for p in programs.values() for fn in p.module.functions.values())
    assert any(v.extern for p in programs.values() for v in p.module.variables.values()), "no dynamic shared memory"
    assert any(v.init for p in programs.values() for v in p.module.variables.values()), "no initialised variable"
