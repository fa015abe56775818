"""parse_ptxas_verbose / parse_ptxas_module on real ptxas 13.5.37 reports."""

from __future__ import annotations

from tlpsim.frontend.resources import (
    ModuleResources,
    ResourceUsage,
    parse_ptxas_module,
    parse_ptxas_verbose,
)

# ptxas -arch=sm_75 -v fx.ptx  (fx.cu: lit uses double literals + sin -> cmem[2];
# reduce: 256-float __shared__ + __syncthreads; dyn: extern __shared__ only;
# callit calls a __noinline__ helper with a local array; __constant__ float coeffs[16]).
SM75 = """\
ptxas info    : 272 bytes gmem, 64 bytes cmem[3], 16 bytes cmem[4]
ptxas info    : Compiling entry function '_Z3litPdi' for 'sm_75'
ptxas info    : Function properties for _Z3litPdi
    40 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 26 registers, used 0 barriers, 40 bytes cumulative stack size, 364 bytes cmem[0], 160 bytes cmem[2]
ptxas info    : Compile time = 20.983 ms
ptxas info    : Function properties for __internal_trig_reduction_slowpathd
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z5heavyPKfPf' for 'sm_75'
ptxas info    : Function properties for _Z5heavyPKfPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 62 registers, used 0 barriers, 368 bytes cmem[0]
ptxas info    : Compile time = 18.302 ms
ptxas info    : Compiling entry function '_Z3dynPfi' for 'sm_75'
ptxas info    : Function properties for _Z3dynPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 364 bytes cmem[0]
ptxas info    : Compile time = 1.972 ms
ptxas info    : Compiling entry function '_Z6reducePKfPf' for 'sm_75'
ptxas info    : Function properties for _Z6reducePKfPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem, 368 bytes cmem[0]
ptxas info    : Compile time = 3.270 ms
ptxas info    : Compiling entry function '_Z6callitPfi' for 'sm_75'
ptxas info    : Function properties for _Z6callitPfi
    64 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 22 registers, used 0 barriers, 64 bytes cumulative stack size, 364 bytes cmem[0]
ptxas info    : Compile time = 2.855 ms
ptxas info    : Function properties for _Z6helperPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
"""

# ptxas -arch=sm_80 -v -maxrregcount=16 fx.ptx: warning line, "Overriding" lines, spills.
SM80_MAXRREG16 = """\
ptxas warning : For profile sm_80 adjusting per thread register count of 16 to lower bound of 24
ptxas info    : Overriding maximum register limit 256 for '_Z3litPdi' with  24 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for '_Z5heavyPKfPf' with  24 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for '_Z3dynPfi' with  24 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for '_Z6reducePKfPf' with  24 of maxrregcount option
ptxas info    : Overriding maximum register limit 256 for '_Z6callitPfi' with  24 of maxrregcount option
ptxas info    : 272 bytes gmem, 64 bytes cmem[3], 16 bytes cmem[4]
ptxas info    : Compiling entry function '_Z3litPdi' for 'sm_80'
ptxas info    : Function properties for _Z3litPdi
    40 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 40 bytes cumulative stack size, 364 bytes cmem[0], 160 bytes cmem[2]
ptxas info    : Compile time = 59.012 ms
ptxas info    : Function properties for __internal_trig_reduction_slowpathd
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z5heavyPKfPf' for 'sm_80'
ptxas info    : Function properties for _Z5heavyPKfPf
    776 bytes stack frame, 1532 bytes spill stores, 1564 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 776 bytes cumulative stack size, 368 bytes cmem[0]
ptxas info    : Compile time = 108.240 ms
ptxas info    : Compiling entry function '_Z3dynPfi' for 'sm_80'
ptxas info    : Function properties for _Z3dynPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 364 bytes cmem[0]
ptxas info    : Compile time = 8.034 ms
ptxas info    : Compiling entry function '_Z6reducePKfPf' for 'sm_80'
ptxas info    : Function properties for _Z6reducePKfPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem, 368 bytes cmem[0]
ptxas info    : Compile time = 7.839 ms
ptxas info    : Compiling entry function '_Z6callitPfi' for 'sm_80'
ptxas info    : Function properties for _Z6callitPfi
    64 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 23 registers, used 0 barriers, 64 bytes cumulative stack size, 364 bytes cmem[0]
ptxas info    : Compile time = 7.615 ms
ptxas info    : Function properties for _Z6helperPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
"""

# ptxas -arch=sm_90 -v fx.ptx: no cmem anywhere.
SM90 = """\
ptxas info    : 272 bytes gmem
ptxas info    : Compiling entry function '_Z3litPdi' for 'sm_90'
ptxas info    : Function properties for _Z3litPdi
    40 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 28 registers, used 0 barriers, 40 bytes cumulative stack size
ptxas info    : Compile time = 22.345 ms
ptxas info    : Function properties for __internal_trig_reduction_slowpathd
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z5heavyPKfPf' for 'sm_90'
ptxas info    : Function properties for _Z5heavyPKfPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 56 registers, used 0 barriers
ptxas info    : Compile time = 15.418 ms
ptxas info    : Compiling entry function '_Z3dynPfi' for 'sm_90'
ptxas info    : Function properties for _Z3dynPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers
ptxas info    : Compile time = 2.169 ms
ptxas info    : Compiling entry function '_Z6reducePKfPf' for 'sm_90'
ptxas info    : Function properties for _Z6reducePKfPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Compile time = 3.347 ms
ptxas info    : Compiling entry function '_Z6callitPfi' for 'sm_90'
ptxas info    : Function properties for _Z6callitPfi
    64 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 23 registers, used 0 barriers, 64 bytes cumulative stack size
ptxas info    : Compile time = 3.080 ms
ptxas info    : Function properties for _Z6helperPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
"""

# nvcc -ptx -rdc=true; ptxas -arch=sm_86 -v -c: .func functions keep their own
# frames (first one printed before any "for 'sm_86'" line), names with '$'.
SM86_RELOCATABLE = """\
ptxas info    : 0 bytes gmem
ptxas info    : Function properties for _Z6helperPfi$1
    72 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compile time = 7.934 ms
ptxas info    : Compiling entry function '_Z6callitPfi' for 'sm_86'
ptxas info    : Function properties for _Z6callitPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 364 bytes cmem[0]
ptxas info    : Compile time = 1.804 ms
ptxas info    : Compiling entry function '_Z8localarrPfPKii' for 'sm_86'
ptxas info    : Function properties for _Z8localarrPfPKii
    256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 0 barriers, 372 bytes cmem[0]
ptxas info    : Compile time = 74.815 ms
ptxas info    : Function properties for _Z6helperPfi
    72 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compile time = 7.220 ms
"""

# Older ptxas style (hand-written, not produced by 13.5): "Compiling function"
# plus a Used line for a .func, no "used N barriers" item, cmem[2] per kernel.
LEGACY = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z6vecaddPKfS0_Pfi' for 'sm_80'
ptxas info    : Function properties for _Z6vecaddPKfS0_Pfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 24 registers, used 1 barriers, 256 bytes smem, 380 bytes cmem[0], 16 bytes cmem[2]
ptxas info    : Compiling function '_Z6helperfi' for 'sm_80'
ptxas info    : Function properties for _Z6helperfi
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 10 registers
"""


def test_sm75_all_kernels():
    res = parse_ptxas_verbose(SM75)
    assert list(res) == [
        "_Z3litPdi",
        "__internal_trig_reduction_slowpathd",
        "_Z5heavyPKfPf",
        "_Z3dynPfi",
        "_Z6reducePKfPf",
        "_Z6callitPfi",
        "_Z6helperPfi",
    ]
    assert res["_Z3litPdi"] == ResourceUsage(
        name="_Z3litPdi", is_entry=True, arch="sm_75", registers=26, shared_bytes=0, local_bytes=40,
        cumulative_stack_bytes=40, spill_stores=0, spill_loads=0, barriers=0, const_bytes=160,
        cmem_banks={0: 364, 2: 160},
    )
    assert res["_Z3litPdi"].param_cmem_bytes == 364
    assert res["_Z6reducePKfPf"] == ResourceUsage(
        name="_Z6reducePKfPf", is_entry=True, arch="sm_75", registers=12, shared_bytes=1024,
        barriers=1, cmem_banks={0: 368},
    )
    # dynamic shared memory only: no smem item
    assert res["_Z3dynPfi"].shared_bytes == 0
    assert res["_Z3dynPfi"].barriers == 1
    assert res["_Z3dynPfi"].registers == 12
    assert res["_Z5heavyPKfPf"].registers == 62
    assert res["_Z5heavyPKfPf"].has_spills is False
    callit = res["_Z6callitPfi"]
    assert (callit.registers, callit.local_bytes, callit.cumulative_stack_bytes) == (22, 64, 64)
    assert callit.const_bytes == 0
    # .func: properties only, no Used line -> registers 0, arch of the preceding entry
    assert res["_Z6helperPfi"] == ResourceUsage(name="_Z6helperPfi", is_entry=False, arch="sm_75")
    assert res["__internal_trig_reduction_slowpathd"].is_entry is False
    assert parse_ptxas_module(SM75) == ModuleResources(gmem_bytes=272, cmem_banks={3: 64, 4: 16})


def test_sm80_spills_warning_and_override_lines():
    res = parse_ptxas_verbose(SM80_MAXRREG16)
    assert len(res) == 7
    assert res["_Z5heavyPKfPf"] == ResourceUsage(
        name="_Z5heavyPKfPf", is_entry=True, arch="sm_80", registers=24, shared_bytes=0, local_bytes=776,
        cumulative_stack_bytes=776, spill_stores=1532, spill_loads=1564, barriers=0, const_bytes=0,
        cmem_banks={0: 368},
    )
    assert res["_Z5heavyPKfPf"].has_spills is True
    assert res["_Z3litPdi"].registers == 24
    assert res["_Z3litPdi"].const_bytes == 160
    assert res["_Z6callitPfi"].registers == 23
    assert all(r.arch == "sm_80" for r in res.values())
    assert parse_ptxas_module(SM80_MAXRREG16) == ModuleResources(gmem_bytes=272, cmem_banks={3: 64, 4: 16})


def test_sm90_has_no_cmem():
    res = parse_ptxas_verbose(SM90)
    assert res["_Z6reducePKfPf"] == ResourceUsage(
        name="_Z6reducePKfPf", is_entry=True, arch="sm_90", registers=12, shared_bytes=1024, barriers=1
    )
    assert res["_Z3litPdi"] == ResourceUsage(
        name="_Z3litPdi", is_entry=True, arch="sm_90", registers=28, local_bytes=40, cumulative_stack_bytes=40
    )
    assert res["_Z5heavyPKfPf"].registers == 56
    assert all(r.cmem_banks == {} and r.const_bytes == 0 for r in res.values())
    assert parse_ptxas_module(SM90) == ModuleResources(gmem_bytes=272, cmem_banks={})


def test_sm86_relocatable_funcs_have_frames():
    res = parse_ptxas_verbose(SM86_RELOCATABLE, arch="sm_86")
    assert list(res) == ["_Z6helperPfi$1", "_Z6callitPfi", "_Z8localarrPfPKii", "_Z6helperPfi"]
    assert res["_Z6helperPfi$1"] == ResourceUsage(
        name="_Z6helperPfi$1", is_entry=False, arch="sm_86", local_bytes=72, cumulative_stack_bytes=72
    )
    assert res["_Z6callitPfi"] == ResourceUsage(
        name="_Z6callitPfi", is_entry=True, arch="sm_86", registers=24, cmem_banks={0: 364}
    )
    assert res["_Z8localarrPfPKii"].local_bytes == 256
    assert res["_Z8localarrPfPKii"].cumulative_stack_bytes == 256  # not printed -> local_bytes
    assert res["_Z8localarrPfPKii"].registers == 40
    assert res["_Z6helperPfi"].local_bytes == 72
    # without an arch argument the first .func has no known arch
    assert parse_ptxas_verbose(SM86_RELOCATABLE)["_Z6helperPfi$1"].arch == ""
    assert parse_ptxas_module(SM86_RELOCATABLE) == ModuleResources(gmem_bytes=0, cmem_banks={})


def test_legacy_compiling_function_and_missing_barriers():
    res = parse_ptxas_verbose(LEGACY)
    assert res["_Z6vecaddPKfS0_Pfi"] == ResourceUsage(
        name="_Z6vecaddPKfS0_Pfi", is_entry=True, arch="sm_80", registers=24, shared_bytes=256,
        barriers=1, const_bytes=16, cmem_banks={0: 380, 2: 16},
    )
    assert res["_Z6helperfi"] == ResourceUsage(
        name="_Z6helperfi", is_entry=False, arch="sm_80", registers=10, local_bytes=8,
        cumulative_stack_bytes=8, spill_stores=4, spill_loads=4, barriers=0,
    )


def test_empty_and_garbage_input():
    assert parse_ptxas_verbose("") == {}
    assert parse_ptxas_verbose("ptxas fatal   : Unresolved extern function 'foo'\n") == {}
    assert parse_ptxas_module("") == ModuleResources()


def test_to_dict_roundtrip_and_hash():
    r = parse_ptxas_verbose(SM75)["_Z3litPdi"]
    d = r.to_dict()
    assert d == {
        "name": "_Z3litPdi",
        "is_entry": True,
        "arch": "sm_75",
        "registers": 26,
        "shared_bytes": 0,
        "local_bytes": 40,
        "cumulative_stack_bytes": 40,
        "spill_stores": 0,
        "spill_loads": 0,
        "barriers": 0,
        "const_bytes": 160,
        "cmem_banks": {"0": 364, "2": 160},
    }
    assert ResourceUsage.from_dict(d) == r
    assert hash(ResourceUsage.from_dict(d)) == hash(r)
    assert len({r, ResourceUsage.from_dict(d)}) == 1
    m = parse_ptxas_module(SM75)
    assert ModuleResources.from_dict(m.to_dict()) == m
