"""Sampled timing simulation with error bounds (issue 32).

Two ways to simulate less of a run in detail, both projecting what they skip from
what they simulated, each with a confidence interval:

- kernel sampling (Sieve-like, `kernels.py`): launches grouped by static kernel,
  shape and instruction count; one or two representatives per group are simulated,
  the other launches' cycles and statistics are projected from them;
- CTA-wave sampling (TBPoint/PKA-like, `waves.py`): inside a launch, detail runs
  until the per-wave IPC (and the counters plug-ins declare tracked) is stable over
  K waves (`rule.py`), the middle waves' CTAs are skipped by the dispatcher and
  projected, the tail is simulated.

The functional pass always runs in full: sampling never changes a functional result.
`spec.py` holds the user's choice; `safety.py` the plug-ins' stationarity."""

from tlpsim.sampling.spec import SAMPLE_MODES, SamplingSpec

__all__ = ["SAMPLE_MODES", "SamplingSpec"]
