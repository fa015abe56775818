"""What the user asked of sampling: `--sample kernels|waves|all` and its knobs."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from tlpsim.errors import ConfigError

#: the --sample choices; "off" (full detail) is the default
SAMPLE_MODES = ("off", "kernels", "waves", "all")


@dataclass(frozen=True)
class SamplingSpec:
    """`mode`: which sampling runs; `tolerance`: the relative spread of per-wave IPC
    (and tracked counters' rates) that counts as stable, and the kernel groups'
    instruction-count match; `window`: K, the consecutive waves that must agree;
    `warmup_waves`: waves never used for the rule (caches and schedulers filling);
    `confidence`: the interval's two-sided level."""

    mode: str = "off"
    tolerance: float = 0.02
    window: int = 3
    warmup_waves: int = 1
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if self.mode not in SAMPLE_MODES:
            raise ConfigError(f"--sample must be one of {', '.join(SAMPLE_MODES)}, not {self.mode!r}")
        if not 0 < self.tolerance < 1:
            raise ConfigError(f"--sample-tolerance must be in (0, 1), e.g. 0.02 for 2 %; got {self.tolerance}")
        if not 2 <= self.window <= 30:
            raise ConfigError(f"sampling window (K waves) must be 2..30, got {self.window}")
        if self.warmup_waves < 0:
            raise ConfigError(f"sampling warm-up waves must be >= 0, got {self.warmup_waves}")
        if self.confidence not in (0.9, 0.95, 0.99):
            raise ConfigError(f"sampling confidence must be 0.9, 0.95 or 0.99, got {self.confidence}")

    @property
    def on(self) -> bool:
        return self.mode != "off"

    @property
    def kernels(self) -> bool:
        return self.mode in ("kernels", "all")

    @property
    def waves(self) -> bool:
        return self.mode in ("waves", "all")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict | None) -> SamplingSpec:
        if not d:
            return cls()
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(f"unknown sampling key(s) {', '.join(sorted(unknown))} "
                              f"(keys: {', '.join(cls.__dataclass_fields__)})")
        return cls(**d)

    def label(self) -> str:
        return "full detail" if not self.on else f"sampled ({self.mode}, tolerance {self.tolerance:g}, K={self.window})"
