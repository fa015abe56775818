"""docs/exec.md lists the CUDA runtime API as the code implements it."""

from __future__ import annotations

from tlpsim.cudart import apidoc, build


def test_exec_doc_lists_match_the_runtime_library():
    text = apidoc.DOC.read_text()
    start, end = text.index(apidoc.BEGIN), text.index(apidoc.END) + len(apidoc.END)
    assert text[start:end] == apidoc.markdown(), "run `python -m tlpsim.cudart.apidoc --write`"


def test_api_lists_partition_nvidias_exports():
    lists = apidoc.api_lists()
    groups = [set(v) for v in lists.values()]
    assert sum(len(g) for g in groups) == len(set().union(*groups))  # disjoint
    assert set().union(*groups) == set(build.exported_names())
    assert {"cudaMalloc", "cudaLaunchKernel", "cudaMemcpyToSymbol", "cudaEventElapsedTime",
            "cudaCreateTextureObject", "cudaMallocArray", "cudaMemcpy2DToArray_ptds"} <= set(lists["implemented"])
    assert {"cudaProfilerStart", "cudaDeviceSetCacheConfig"} <= set(lists["accepted"])
    assert {"cudaMalloc3DArray", "cudaCreateSurfaceObject", "__cudaRegisterHostVar"} <= set(lists["unsupported"])
