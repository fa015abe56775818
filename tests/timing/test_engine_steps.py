"""The engine's time steps: components of several clock domains tick at their own
edges in index order, and a component woken during a sweep ticks where a dense run
would tick it (the step loop looks at domains, not at each active component)."""

from tlpsim.timing.engine import ClockDomain, Component, Engine


class Logger(Component):
    """Ticks while it has work left; logs (time, name, cycle)."""

    def __init__(self, domain, name, log, work=0, wakes=()):
        super().__init__(domain)
        self.name = name
        self.log = log
        self.work = work
        self.wakes = wakes  # (cycle, other component) pairs: wake `other` at that cycle
        self.skips = []

    def tick(self, cycle):
        self.log.append((self.engine.now, self.name, cycle))
        for c, other in self.wakes:
            if c == cycle:
                other.work += 1
                other.wake()
        if self.work > 0:
            self.work -= 1
            return True
        return False

    def skipped(self, first, last):
        self.skips.append((first, last))


def test_two_domains_tick_at_their_edges_in_index_order():
    log = []
    eng = Engine()
    fast, slow = ClockDomain("fast", 3), ClockDomain("slow", 5)
    a = eng.add(Logger(fast, "a", log, work=4))
    eng.add(Logger(slow, "b", log, work=2))
    eng.add(Logger(fast, "c", log, work=1))
    eng.run()
    assert log == [(0, "a", 0), (0, "b", 0), (0, "c", 0),
                   (3, "a", 1), (3, "c", 1),
                   (5, "b", 1),
                   (6, "a", 2),
                   (9, "a", 3),
                   (10, "b", 2),
                   (12, "a", 4)]
    assert a.ticks == 5 and a.last_cycle == 4


def test_a_component_woken_by_a_later_one_ticks_next_cycle_and_an_earlier_one_this_step():
    log = []
    eng = Engine()
    dom = ClockDomain("core", 10)
    early = eng.add(Logger(dom, "early", log), active=False)
    late = Logger(dom, "late", log)
    waker = eng.add(Logger(dom, "waker", log, work=3, wakes=((2, early), (2, late))))
    eng.add(late, active=False)
    eng.run()
    # at cycle 2 the waker (index 1) wakes `early` (index 0: a dense run ticked it idle
    # this cycle already, so it is accounted to 2 and ticks at 3) and `late` (index 2:
    # not yet ticked this cycle, so it ticks at 2, in a second step at the same time)
    assert log == [(0, "waker", 0), (10, "waker", 1), (20, "waker", 2), (20, "late", 2),
                   (30, "early", 3), (30, "waker", 3), (30, "late", 3), (40, "early", 4)]
    assert early.skips == [(0, 2)]
    assert late.skips == [(0, 1)]
    assert waker.last_cycle == 3


def test_a_component_accounted_to_the_current_cycle_does_not_tick_at_it():
    log = []
    eng = Engine()
    dom = ClockDomain("core", 4)
    x = eng.add(Logger(dom, "x", log, work=1))
    eng.add(Logger(dom, "y", log))
    eng.run()
    assert eng.now == 4 and x.last_cycle == 1
    y = eng.components[1]
    eng.account_to(y, 1)   # y's slept cycle 1 counted: it has nothing left to tick at time 4
    x.work = 1
    eng.wake(y)
    eng.wake(x)
    eng.run()
    assert log == [(0, "x", 0), (0, "y", 0), (4, "x", 1),
                   (8, "x", 2), (8, "y", 2), (12, "x", 3)]
    assert y.skips == [(1, 1)]
