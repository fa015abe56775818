"""Validation of tlpsim's timing model against GPGPU-Sim: the six reference
programs and four calibration microbenchmarks of the reference data, run with the
same PTX, inputs and launches, compared per launch (cycles, IPC, miss rates, DRAM
utilisation), by the microbenchmarks' derived figures (from in-kernel `%clock`
reads measured in the timing model) and by CTA-limit sweeps (shape and best N).

    from tlpsim.validate import Options, validate
    record = validate(Options(only=["histogram_atomic", "smem_stride.tput.1"], sweeps=False))

Modules: `reference` (the data), `lcg` and `programs` (the reference programs),
`micro` (the microbenchmarks), `clock` (the %clock probe), `launching` (what the
host programs share), `measure` (metrics and running a program), `jobs` (one run,
and the worker pool), `stats` (r, MAE, sweep shapes), `compare` (rows, summary,
criteria), `runner` (the whole validation), `markdown`, `plots` and `output`.
`tlpsim validate` is the command line (tlpsim.cli_validate).
"""

from tlpsim.validate.runner import Options, validate

__all__ = ["Options", "validate"]
