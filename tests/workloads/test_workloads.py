"""Every built-in workload verifies at `tiny`; the suite's coverage table is generated
from the registry and meets the counts the experiments need."""

from pathlib import Path

import pytest

import tlpsim
from tlpsim.workloads import catalog as cat
from tlpsim.workloads.registry import load_workloads

NAMES = sorted(load_workloads())
DOC = Path(__file__).resolve().parents[2] / "docs" / "workloads.md"


def test_suite_size():
    assert len(NAMES) >= 24


@pytest.mark.parametrize("name", NAMES)
def test_tiny_verifies(name):
    with tlpsim.Device(trace=False):
        result = load_workloads()[name].execute("tiny")
    assert result.launches, "no kernel launched"
    assert result.verified, [c for c in result.checks if not c.ok]


@pytest.mark.parametrize("name", NAMES)
def test_tiny_verifies_with_dead_registers_poisoned(name):
    """The liveness/release/region analyses are sound on every workload."""
    with tlpsim.Device(trace=False, poison_dead_registers=True):
        result = load_workloads()[name].execute("tiny")
    assert result.verified, [c for c in result.checks if not c.ok]


@pytest.fixture(scope="module")
def rows():
    return cat.catalog("gtx480")


def test_coverage_targets_met(rows):
    cov = cat.coverage(rows)
    for what, need in cat.COVERAGE_TARGETS.items():
        assert len(cov[what]) >= need, f"{what}: {cov[what]}"


def test_docs_table_is_generated_from_the_registry():
    from tlpsim.workloads import catalog_doc

    text = DOC.read_text()
    begin, end = catalog_doc.generated_part(text, DOC)
    assert text[begin:end] == catalog_doc.markdown("gtx480"), \
        "docs/workloads.md is stale: regenerate with `tlpsim workloads --markdown --update docs/workloads.md`"


def test_doc_update_keeps_the_hand_written_parts(tmp_path):
    from tlpsim.workloads import catalog_doc

    doc = tmp_path / "w.md"
    head, tail = "# Title\n\nhand-written\n\n", "\n## Notes\nmore\n"
    doc.write_text(f"{head}{catalog_doc.BEGIN}\nold\n{catalog_doc.END}\n{tail}")
    catalog_doc.update_file(doc, f"{catalog_doc.BEGIN}\nnew\n{catalog_doc.END}\n")
    assert doc.read_text() == f"{head}{catalog_doc.BEGIN}\nnew\n{catalog_doc.END}\n{tail}"
    doc.write_text("no markers\n")
    with pytest.raises(tlpsim.TlpsimError, match="w.md: no generated part"):
        catalog_doc.update_file(doc, "x")


def test_unknown_workload_and_size_are_clear_errors():
    from tlpsim.workloads.registry import get_workload

    with pytest.raises(tlpsim.TlpsimError, match="unknown workload 'nope'; available:"):
        get_workload("nope")
    with pytest.raises(tlpsim.TlpsimError, match="unknown size"):
        get_workload("vecadd").execute("huge")
