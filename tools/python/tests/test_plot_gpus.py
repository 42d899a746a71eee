"""The transfer lab across GPUs (plot_gpus) on the committed 4 x H100 runs: the pair maps colour the pairs over their
own range (never from 0), the latency probes are titled by what they measure, the comparison with nccl-tests is
what the committed table holds, and bad input is one line and exit 2."""
import os

import pytest

from memlab_tools import plot_gpus, results

from conftest import REPO, exit_code

RUNS = os.path.join(REPO, "docs", "results", "h100x4", "transfer")


def run(name):
    return os.path.join(RUNS, name)


def transfer_records(*names):
    return [r for n in names for r in plot_gpus._transfer(results.load(run(n))["results"])]


def test_a_colour_scale_spans_the_values_not_zero():
    norm = plot_gpus._norm([368.0, 371.5, 393.2])
    assert 360 < norm.vmin <= 368 and 393.2 <= norm.vmax < 400
    flat = plot_gpus._norm([391.0, 391.0])  # equal values: a scale of 1% of them, not a division by zero
    assert flat.vmax - flat.vmin == pytest.approx(3.91)


def test_the_latency_probes_are_titled_by_what_they_measure():
    panels = plot_gpus.latency_panels(transfer_records("pairs_latency.json"))
    chase = [p for p in panels if p[0] == "peer_chase"]
    ping = [p for p in panels if p[0] == "peer_pingpong"]
    # the chase moves with the bytes chased (every pair: the peer's DRAM costs more than its L2): a panel a size;
    # the ping-pong ignores the size: one panel
    assert [p[2] for p in chase] == [1 << 20, 1 << 30] and len(ping) == 1 and ping[0][2] is None
    assert "the peer's L2" in chase[0][3] and "the peer's DRAM" in chase[1][3]
    for _, _, _, title in panels:
        assert "ns_per_load" not in title and "ns_one_way" not in title and "round trip" in title or "one-way" in title


def test_the_pictures_are_drawn(tmp_path):
    records = transfer_records("pairs.json", "pairs_latency.json")
    device = "NVIDIA H100 80GB HBM3"
    made = [plot_gpus.pairs_picture(records, 256 << 20, str(tmp_path), device),
            plot_gpus.latency_picture(records, str(tmp_path), device)]
    assert [os.path.basename(m) for m in made] == ["pairs_256MiB.png", "latency_pairs.png"]
    assert all(os.path.getsize(m) > 10000 for m in made)


def test_the_comparison_is_the_committed_table(tmp_path):
    table = tmp_path / "t.md"
    assert plot_gpus.main([run("host_16MiB_1GiB_memlab.json"), "--nccl-tests", run("host_16MiB_1GiB_nccl_tests.log"), "--only", "table",
                           "--table", str(table), "-o", str(tmp_path)]) == 0
    with open(run("host_16MiB_1GiB_vs_nccl_tests.md"), encoding="utf-8") as f:
        assert table.read_text() == f.read()


@pytest.mark.parametrize("argv, says", [
    (["--only", "pie"], "--only: 'pie' is not one of"),
    (["--also-nccl-tests", "no-label"], "--also-nccl-tests: 'no-label' is not LABEL=LOG"),
    (["--nccl-tests", "/nonexistent.log"], "/nonexistent.log: cannot be read"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, says):
    assert exit_code(plot_gpus.main, [run("host_16MiB_1GiB_memlab.json"), "-o", str(tmp_path)] + argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err


def test_a_file_that_is_not_results_is_one_line_and_exit_2(tmp_path, capsys):
    assert plot_gpus.main([run("machine.log"), "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("plot_gpus: ") and "machine.log" in err
