"""Workload variants (`register_variant`), the papers' CTA shapes in the lcs_bcs
stand-ins and mergesort (EXPARS), and the NumPy references of the new workloads (mummer, kmeans_rodinia,
laplace3d) checked against brute force or against deliberately wrong answers."""

import numpy as np
import pytest

import tlpsim
from tlpsim.sweep.job import RunParams
from tlpsim.sweep.spec import parse_spec, validate
from tlpsim.workloads import registry
from tlpsim.workloads.registry import get_workload, load_workloads, register_variant

SHAPES = {"matadd_16x16": (16, 16, 1), "transpose_16x16": (16, 16, 1), "fdtd2d_16x16": (16, 16, 1),
          "hotspot_16x16": (16, 16, 1), "stencil2d_16x8": (16, 8, 1)}


def _launches(name):
    with tlpsim.Device(trace=False):
        res = get_workload(name).execute("tiny")
    assert res.verified, [c for c in res.checks if not c.ok]
    return res.launches


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_variant_launches_its_block_shape_and_keeps_the_base_unchanged(name):
    wl = load_workloads()[name]
    base = load_workloads()[wl.variant_of]
    assert wl.source == base.source and dict(wl.params)["block"] == SHAPES[name][:2]
    assert {r.block for r in _launches(name)} == {SHAPES[name]}
    assert all(r.block != SHAPES[name] for r in _launches(base.name))


def test_block_variants_move_the_same_data_through_more_ctas_where_the_cta_is_smaller():
    base, var = _launches("stencil2d"), _launches("stencil2d_16x8")
    # 40x72 grid: 32x8 CTAs -> 3x5 grid, 16x8 -> 5x5
    assert (base[0].grid, var[0].grid) == ((3, 5, 1), (5, 5, 1))
    # hotspot 16x16 keeps 5 rows per thread: a 16x80 tile in the same 15 KiB of shared memory
    hs, hs16 = _launches("hotspot")[0], _launches("hotspot_16x16")[0]
    assert hs.resources.shared_bytes == hs16.resources.shared_bytes == 3 * 40 * 32 * 4


def test_a_variant_is_its_own_run_and_is_accepted_by_sweeps():
    a, b = RunParams("matadd", "tiny"), RunParams("matadd_16x16", "tiny")
    assert a.key() != b.key()
    spec = parse_spec('workloads = ["matadd", "matadd_16x16"]\nsizes = ["tiny"]\n', "t.toml")
    validate(spec)
    assert sorted(r.workload for r in spec.runs) == ["matadd", "matadd_16x16"]


def test_register_variant_refuses_bad_declarations():
    with pytest.raises(RuntimeError, match="base workload 'nope' is not registered"):
        register_variant("nope", "nope_2", "x", block=(1, 1))
    with pytest.raises(RuntimeError, match="'matadd_16x16' registered twice"):
        register_variant("matadd", "matadd_16x16", "x", block=(16, 16))
    with pytest.raises(RuntimeError, match="sets no parameter"):
        register_variant("matadd", "matadd_plain", "x")
    assert "matadd_plain" not in registry.WORKLOADS


def test_transpose_refuses_a_tile_its_rows_do_not_divide():
    with tlpsim.Device(trace=False), pytest.raises(ValueError, match="tile height 12 must divide 32"):
        load_workloads()["transpose"].run("tiny", np.random.default_rng(1), block=(32, 12))


def test_lcs_bcs_stand_ins_use_the_papers_cta_shapes():
    from tlpsim.experiments.lcs_bcs import LcsBcs
    from tlpsim.experiments.lcs_bcs.suite import BENCHMARKS

    by_abbr = {b.abbr: b for b in BENCHMARKS}
    for abbr in ("MADD", "TRAN", "FDTD", "3DFD", "LPS"):
        b = by_abbr[abbr]
        x, y = (int(v) for v in b.cta.split("x"))
        assert {r.block for r in _launches(b.workload)} == {(x, y, 1)}, abbr
    assert [by_abbr[a].workload for a in ("KMN", "MUM", "LPS")] == ["kmeans_rodinia", "mummer", "laplace3d"]
    typed = LcsBcs().workloads()
    # shape variants are typed only where they stand in for a paper benchmark
    assert "matadd_16x16" in typed and "matadd" in typed
    assert not [w for w in typed if load_workloads()[w].variant_of and w not in {b.workload for b in BENCHMARKS}]


# ---------------------------------------------------------------- mummer


def test_suffix_array_matches_sorting_the_suffixes():
    from tlpsim.workloads.mummer import suffix_array

    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 17, 500):
        s = rng.integers(0, 4, n).astype(np.uint8)
        assert list(suffix_array(s)) == sorted(range(n), key=lambda i: bytes(s[i:]))
    s = np.zeros(64, np.uint8)   # all equal: a shorter suffix sorts first
    assert list(suffix_array(s)) == list(range(63, -1, -1))


def test_mummer_reference_finds_the_longest_match_by_brute_force():
    from tlpsim.workloads.mummer import QLEN, make_queries, reference, suffix_array

    rng = np.random.default_rng(5)
    ref = rng.integers(0, 4, 700).astype(np.uint8)
    q = make_queries(ref, 60, rng)
    lens, pos = reference(ref, suffix_array(ref), q)
    for qi in range(len(q)):
        best = 0
        for i in range(ref.size):
            m = 0
            while m < QLEN and i + m < ref.size and ref[i + m] == q[qi, m]:
                m += 1
            best = max(best, m)
        assert lens[qi] == best
        assert np.array_equal(ref[pos[qi]:pos[qi] + best], q[qi, :best])


# ---------------------------------------------------------------- kmeans_rodinia


def test_kmeans_rodinia_membership_check_rejects_a_wrong_assignment():
    from tlpsim.workloads.kmeans_rodinia import check_membership, points

    rng = np.random.default_rng(2)
    pts = points(200, 5, rng)
    cent = pts[:5]
    d = ((pts[:, None, :].astype(np.float64) - cent[None].astype(np.float64)) ** 2).sum(axis=2)
    best = d.argmin(axis=1)
    assert check_membership("m", pts.astype(np.float64), cent, best).ok
    wrong = best.copy()
    wrong[7] = (best[7] + 1) % 5
    assert not check_membership("m", pts.astype(np.float64), cent, wrong).ok
    assert not check_membership("m", pts.astype(np.float64), cent, np.full(200, -1)).ok


def test_kmeans_rodinia_is_one_low_register_kernel():
    launches = _launches("kmeans_rodinia")
    assert {r.kernel for r in launches} == {"kmeans_point"}
    assert launches[0].resources.registers <= 24 and launches[0].block == (256, 1, 1)


def test_mergesort_tile_sort_has_the_sdk_shape_of_expars_merg():
    """EXPARS Table 3's MERG (SDK mergeSortSharedKernel): 16 warps and 8,192 B of shared
    memory per CTA, 2 CTAs/SM on Fermi, where registers (not shared memory) limit them."""
    from tlpsim.workloads import catalog, mergesort

    launches = _launches("mergesort")
    tile, *merges = launches
    assert (tile.kernel, tile.block, tile.grid) == ("ms_tile_sort", (512, 1, 1), (4096 // 1024, 1, 1))
    assert tile.resources.shared_bytes == 8192
    # one merge pass per doubling of the sorted runs: 1024 -> 4096 pairs
    assert [r.kernel for r in merges] == ["ms_merge_pass"] * 2
    # at ptxas's 18 registers (reserved as GPGPU-Sim does) 3 CTAs of 512 threads fit both the
    # threads and the registers of a GTX480 SM: one more than MERG's 2 (its compiler's larger count)
    row = {r.kernel: r for r in catalog.catalog("gtx480", ["mergesort"], "tiny")}["ms_tile_sort"]
    assert (row.ctas_per_sm, row.limited_by) == (3, "threads regs")
    assert mergesort.SIZES["study"] == 4 * 28 * 3 * mergesort.TILE  # 4 waves of 28 SMs x 3 CTAs (tesla_m2050)


# ---------------------------------------------------------------- laplace3d


def test_laplace3d_reference_is_the_six_point_mean_with_fixed_faces():
    from tlpsim.workloads.laplace3d import reference

    u = np.zeros((4, 4, 4), np.float32)
    u[1, 1, 2] = 6.0   # x-neighbour of (1, 1, 1)
    u[0, 1, 1] = 12.0  # z-neighbour of (1, 1, 1), on a boundary face
    v = reference(u, 1)
    assert v[1, 1, 1] == np.float32(18.0) * (np.float32(1) / np.float32(6))
    assert v[0, 1, 1] == 12.0 and v[1, 1, 2] == 0.0   # faces copied; (1, 1, 2)'s neighbours are all 0
    assert v[1, 2, 2] == np.float32(6.0) * (np.float32(1) / np.float32(6))


# ---------------------------------------------------------------- fd3d


def test_fd3d_reference_is_the_radius_4_stencil_of_an_impulse():
    from tlpsim.workloads.fd3d import COEFF, reference

    u = np.zeros((13, 13, 13), np.float32)
    u[6, 6, 6] = 1.0
    out, mag = reference(u)
    assert out[6, 6, 6] == pytest.approx(COEFF[0])
    for r in range(1, 5):   # the impulse reaches the interior points at distance r along each axis
        for p in ((6, 6, 6 + r), (6, 6 - r, 6), (6 + r, 6, 6)):
            if all(4 <= c <= 8 for c in p):
                assert out[p] == pytest.approx(COEFF[r]) and mag[p] == pytest.approx(abs(COEFF[r]))
    assert out[5, 5, 6] == 0.0 and out[0, 6, 6] == 0.0   # off-axis points and the halo get nothing
