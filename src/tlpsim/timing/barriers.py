"""CTA barriers (bar.sync): a warp that reaches one waits until every live warp of
its CTA has arrived; warps of a partially admitted CTA that are not resident yet
count as live, so the barrier waits for them too."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tlpsim.timing.fetch import Fetch
    from tlpsim.timing.issue import IssueStage
    from tlpsim.timing.slots import Slots
    from tlpsim.timing.warp import CTA, Warp


class Barriers:
    # wired by the SM
    issue: IssueStage
    fetch: Fetch
    slots: Slots

    def arrive(self, w: Warp, now: int) -> None:
        """`w` issued a barrier (after advancing past it)."""
        w.at_barrier = True
        issue = self.issue
        issue.unready(w)
        w.cta.arrived += 1
        if issue.block_events:
            issue.report_block(w)
        self.check(w.cta, now)

    def check(self, cta: CTA, now: int) -> None:
        """Release the CTA's waiting warps once every live warp has arrived."""
        if cta.arrived and cta.arrived >= cta.live:
            cta.arrived = 0
            for x in cta.warps:
                if x.at_barrier:
                    x.at_barrier = False
                    if x.pos >= x.n:
                        self.slots.warp_done(x, now)
                        continue
                    if x.ibuf == 0:
                        self.fetch.want(x)
                    self.issue.update_ready(x)
