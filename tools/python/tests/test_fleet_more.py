"""memlab-fleet on more fleets of memlab_tools.fleet_sim: a clean one (seed 2026) has no finding; another seed plants
its faults elsewhere and they are found; without serials (memlab.check/1) a history follows the slot, and the swapped
GPU shows as a drift there."""
import pytest

from memlab_tools import fleet, fleet_sim


@pytest.fixture(scope="module")
def committed():
    return fleet_sim.Committed()


@pytest.fixture(scope="module")
def clean(committed):
    sim = fleet_sim.Fleet(committed, seed=2026, clean=True)
    return sim, sim.checks()


def keys(f):
    return ({(x.node, x.gpu, x.peer, x.metric) for x in f.outliers}, {(x.node, x.gpu, x.peer, x.metric)
                                                                       for x in f.drifts})


def test_a_clean_fleet_has_no_finding(clean):
    f = fleet.judge(clean[1])
    assert f.findings == [] and f.exit_status == 0 and f.problems == []
    assert f.judgements == 6148 and f.histories > 3000


def test_another_seed_plants_elsewhere_and_is_found(committed):
    sim = fleet_sim.Fleet(committed, seed=7)
    f = fleet.judge(sim.checks())
    want = sim.planted()
    assert keys(f) == (set(want["outliers"]), set(want["drifts"]))


def test_without_serials_the_history_follows_the_slot(clean):
    """memlab.check/1 files record no serial: a history follows the slot, and the GPU swapped into one looks like a
    drift there. With serials (the clean fleet above) the swap is no finding."""
    sim, checks = clean
    serials = [(g, g.serial) for c in checks for g in c.gpus]
    try:
        for g, _ in serials:
            g.serial = None
        f = fleet.judge(checks)
    finally:
        for g, s in serials:
            g.serial = s
    node, gpu = sim.swapped
    assert {(x.node, x.gpu, x.metric) for x in f.drifts} == {(node, gpu, "hbm_copy")}
    assert f.drifts[0].identity.startswith(f"slot {node} ")
