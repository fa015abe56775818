"""Which kernel sources a hardware measurement ran: the SHA-256 of each built-in
workload's CUDA file as it was when the GPU was measured (for the H200: the sources of
2026-11-27 07:19 UTC, `facts.json`'s start, equal to those at commit 819eba2). A
workload whose source has changed since is left out of `tlpsim validate --hardware`
with the reason, never compared against times of other code; re-measure it on the
GPU and update its digest here."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["MEASURED_SOURCES", "stale_source"]

KERNELS = Path(__file__).resolve().parent.parent / "workloads" / "kernels"

MEASURED_SOURCES: dict[str, dict[str, str]] = {
    "h200": {
        "backprop.cu": "f760cf47007e1c7c8410920f0242119a17a92a4b81b9aba7a8fff279bf9b0495",
        "bfs.cu": "f9a009cd556bc306de45dac42c6d23798809895e8ff17ad2937626e9f85a9c19",
        "blackscholes.cu": "39fa028cf2681f2b6e99c426d5828d2f4d8fc982ab636791a08f41caeab89892",
        "btree.cu": "842e8a1f0eff75bacdf69fef01322925df17c247db11ad62c1035fa6afa54061",
        "conv2d.cu": "28f7fe9bc74ce9a1cb940113d14ffa814ac219e097bd67a6397b4f0d3f5572c8",
        "convsep.cu": "632a36fe392dc2db050c932afb6eb45d58d887f8843696898b0cc3ece6dfaea0",
        "cutcp.cu": "a02852569e185abc8fc833e570dc7f8c5ae4e0c45d4c77e873323bd0241a712c",
        "dct8x8.cu": "1e4467191bfc914122e09eaabb1e99d119041a6feb743328573f665eb632f1e7",
        "fdtd2d.cu": "c939f1b45321e45987820e5708d93291214ae4b67c98840c2ade340da52d3511",
        "gaussian.cu": "2d486692882fcbc323d8b29c497f8e870eb155bb30d44a00ea55059f86550107",
        "histogram.cu": "064db8c9ab026098d0ad0dee4cac63e124e3a050f55c7e8aa0defef27a0a83c3",
        "hotspot.cu": "07a1561c43e671b95c85b3239345173343c79db6a021472879dd3e7ecbf040e6",
        "kmeans.cu": "d28b16654e1ebb7cc35a14ce9b8151b482f569270635461e536f7caa620c3473",
        "lbm.cu": "d4ae1d5b0b44717270b989f2ba06c69ec563a6bc86d40a22d65b4400f3d39930",
        "lud.cu": "ddebdbabcd4bd636e208e2f8fe2663f71bb93caa3f461513036bae7aef232d56",
        "matadd.cu": "f102236f2af96f33e69bb6358d4e147fc851f1e4516bc25f1360baf9f18a2520",
        "mergesort.cu": "e7f42be265cb78450b5e435c06735d8ec8ada5cde7cb68526a1f25256fff8057",
        "mm2.cu": "fb7965b4c9277e0cd0184572c24260220de09e2e7042b4d97d12a72e9c1c9ef0",
        "montecarlo.cu": "e2ceea53794590f3ddc31b49b2b732adf8471c891cea5c9b5e111633f6e0a6c0",
        "mriq.cu": "ff32a7b933e942b4db495d205dce0244bdb280acf28ef4bcfa0b61155142b9f5",
        "nbody.cu": "6e1447626771154d5c07c4c6f0e44f0b7494af25825bd040efe64d38dd1f443e",
        "nn.cu": "5c2927047495f8d314b7d432451afec6aba2ba94a94a7b0f2f039da58812e501",
        "nw.cu": "81a75f9b518af2ad954ae325789d4ca95e23d777bc655ebfe5badefaebe8e8db",
        "pathfinder.cu": "6baa770d86d67b7dbc218c696a1ad54c538dc13b9de43a2eb386c557e6274a9d",
        "raycast.cu": "070f254dd2b08f2444ff13f22b5161ebb55687e4dd632dfc8669ef9f9cf00689",
        "reduction.cu": "dbd4d9f6e9f111f9721e27b9d12e49ecee04df087523c14bb405ad253879bc5a",
        "scalarprod.cu": "5ad6bf0fccf53fd192586deb7876f4b024edb3bd532a7d981526e412249c1c05",
        "scan.cu": "72333140177299306502aeb7ab68560379537a1246ce83dc2dbf1b68ea490ac4",
        "sgemm.cu": "5bea5e3704aac20cc93ad2f526782acb35cca489719a867c7dfe4f8b9e31609c",
        "sgemm_naive.cu": "a18b26f2f56e9a8076439945b9017ed9a91dfbfd95f168ce52561aeb8c2e94e0",
        "spmv.cu": "e0765b4aaf55071e1d71719f541de5592ed6707c7c92371028393872b32667ed",
        "srad.cu": "b40c9e855ba58d5a1e4e1b9597bf15e0967531c5b485e85e36638d1c7a7999fa",
        "stencil2d.cu": "cc62010cd26542745df0891cb9de02e85560c41b584e83e321cb5531bbebbf91",
        "stencil3d.cu": "f82b8838f5e71779aeccfb4ca2594daa29564ab1ba21f4a1005fa7cf9ad50b5c",
        "transpose.cu": "abb1cab2407c972f4f9a2e162a08c00b5f9fecd30e4094290b172cf2884bb88c",
        "transpose_naive.cu": "5be202fe4f41a384a859725d9bfe64489c787d49552990465ee5e1881dd96571",
        "vecadd.cu": "93b30d599382a40ed26401bcbcc967a8f895141dfc10ea8d8c0f2ed41280dd2e",
    },
}


def stale_source(hardware: str, source: str, kernels: Path = KERNELS) -> str | None:
    """Why `source` (a file in the workloads' kernels folder) cannot be compared with
    `hardware`'s measurement, or None when it is the code the GPU ran."""
    known = MEASURED_SOURCES.get(hardware, {})
    if source not in known:
        return f"no record of which {source} the {hardware} ran"
    path = kernels / source
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror}"
    if digest != known[source]:
        return f"{source} changed since the {hardware} measurement; re-measure it on the GPU"
    return None
