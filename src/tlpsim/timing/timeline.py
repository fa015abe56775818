"""Timeline sampling and the deadlock watchdog, one core-clock component.

Every `interval` cycles it records resident CTAs and warps and the instructions
issued so far (so IPC over time follows); every `watchdog` cycles it checks that
some SM issued or a CTA retired, and otherwise stops the run with a deadlock
report naming the stuck warps (ChampSim's watchdog; `watchdog = 0` turns it off).
Sampling happens at fixed multiples of the interval, so dense and sparse runs record
the same series."""

from __future__ import annotations

from tlpsim.timing.engine import ClockDomain, Component


class Timeline(Component):
    name = "timeline"

    def __init__(self, domain: ClockDomain, sms: list, interval: int, watchdog: int) -> None:
        super().__init__(domain)
        self.passive = True
        self.sms = sms
        self.interval = max(int(interval), 1)
        self.watchdog = int(watchdog)  # 0: no watchdog
        if self.watchdog < 0:
            raise ValueError(f"watchdog_cycles must be >= 0 (0 turns it off), got {watchdog}")
        self.samples: dict[str, list] = {"cycle": [], "resident_ctas": [], "resident_warps": [], "warp_insts": [],
                                         "thread_insts": []}
        self.running = False
        self.last_progress = (0, -1)  # (instructions + CTAs done, cycle)
        self.stuck_at: int | None = None
        # optional observer called at each sample with (cycle, warp_insts, thread_insts),
        # e.g. a progress bar; None costs one test per sample
        self.on_sample = None

    def start(self, cycle: int) -> None:
        self.running = True
        self.last_progress = (self._work(), cycle)
        self.wake_at(-(-cycle // self.interval) * self.interval)

    def stop(self) -> None:
        self.running = False

    def busy(self) -> bool:
        return False

    def _work(self) -> int:
        return sum(sm.stats.warp_insts + sm.stats.ctas_done for sm in self.sms)

    def tick(self, cycle: int) -> bool:
        if not self.running:
            return False
        if cycle % self.interval == 0:
            s = self.samples
            s["cycle"].append(cycle)
            s["resident_ctas"].append(sum(sm.n_ctas for sm in self.sms))
            s["resident_warps"].append(sum(sm.n_warps for sm in self.sms))
            s["warp_insts"].append(sum(sm.stats.warp_insts for sm in self.sms))
            s["thread_insts"].append(sum(sm.stats.thread_insts for sm in self.sms))
            if self.on_sample is not None:
                self.on_sample(cycle, s["warp_insts"][-1], s["thread_insts"][-1])
        if self.watchdog and cycle % self.watchdog == 0:
            work = self._work()
            if work != self.last_progress[0]:
                self.last_progress = (work, cycle)
            elif cycle - self.last_progress[1] >= self.watchdog:
                self.stuck_at = cycle
                if self.engine is not None:
                    self.engine.request_stop()
        nxt = -(-(cycle + 1) // self.interval) * self.interval
        if self.watchdog:
            nxt = min(nxt, -(-(cycle + 1) // self.watchdog) * self.watchdog)
        self.wake_at(nxt)
        return False

    def series(self, first_cycle: int, last_cycle: int) -> dict:
        """Samples within [first_cycle, last_cycle], with per-interval IPC."""
        s = self.samples
        idx = [k for k, c in enumerate(s["cycle"]) if first_cycle <= c <= last_cycle]
        out = {key: [s[key][k] for k in idx] for key in s}
        thr = out["thread_insts"]
        # one IPC per sample (none for a launch shorter than the interval)
        out["ipc"] = ([0.0] if thr else []) + [(thr[k] - thr[k - 1]) / self.interval for k in range(1, len(thr))]
        return out
