"""`make bench`'s command line (lab/bench/__main__.py): what it refuses before anything starts,
and the options a Bench is given, one per server of a comparison."""

import pytest

from lab.bench import __main__ as command
from lab.bench import run as bench_run
from tools.deploy import DEFAULT_SERVER, SERVERS


def options(*argv: str) -> dict:
    return vars(command.arguments().parse_args(list(argv)))


@pytest.fixture
def benches(monkeypatch):
    """The Benches the command makes, each run at once: its Options, in order."""
    made = []

    class Recorded:
        def __init__(self, options, deployment=None):
            made.append(options)
            web = {"server": options.server, "workers": options.workers[0], "threads": options.threads}
            self.payload = {"stamp": "test", "web_server": web, "results": [], "cpu_percent_of_one_core": {}}

        def run(self) -> int:
            return 0

    monkeypatch.setattr(bench_run, "Bench", Recorded)
    return made


def test_worker_counts_are_one_or_a_list_of_candidates():
    assert command._workers("3") == [3]
    assert command._workers("2, 3,4,") == [2, 3, 4]
    for wrong in ("", "0", "two", "2,-1"):
        with pytest.raises(command.CommandError, match="--workers"):
            command._workers(wrong)


def test_servers_are_names_the_deployment_knows():
    assert command._servers(f" {SERVERS[0]} ") == [SERVERS[0]]
    assert command._servers(",".join(SERVERS)) == list(SERVERS)
    for wrong in ("", "nginx", f"{SERVERS[0]},apache"):
        with pytest.raises(command.CommandError, match="--server takes names from"):
            command._servers(wrong)


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--scenarios", "floor,warp"], "--scenarios takes names from"),
        (["--scenarios", " , "], "--scenarios takes names from"),
        (["--users", "0"], "must be positive"),
        (["--bursts", "0"], "must be positive"),
        (["--drain-stock", "0"], "--drain-stock and --hot-row-clients"),
        (["--workers", "0"], "--workers"),
        (["--server", "nginx"], "--server"),
    ],
)
def test_a_wrong_option_is_refused_before_any_bench_is_made(benches, argv, error):
    with pytest.raises(command.CommandError, match=error):
        command.run(options(*argv), bench_run.SCENARIOS)
    assert benches == []


def test_the_chosen_scenarios_run_in_the_benchs_own_order_with_the_options_given(benches):
    status = command.run(
        options("--scenarios", "burst, floor", "--users", "40", "--workers", "2,3", "--celery-nice", "0"),
        bench_run.SCENARIOS,
    )
    assert status == 0
    (given,) = benches
    assert given.scenarios == ("floor", "burst")  # as SCENARIOS lists them, whatever the order asked
    assert (given.shoppers, given.workers, given.celery_nice, given.server) == (40, [2, 3], 0, DEFAULT_SERVER)
    assert given.output.is_absolute()


def test_without_scenarios_every_one_runs(benches):
    command.run(options(), bench_run.SCENARIOS)
    assert benches[0].scenarios == bench_run.SCENARIOS


def test_a_server_list_makes_one_bench_per_server_and_saves_the_comparison(benches, tmp_path, capsys):
    two = ",".join(SERVERS[:2])
    command.run(options("--server", two, "--scenarios", "floor", "--output", str(tmp_path)), bench_run.SCENARIOS)
    assert [given.server for given in benches] == list(SERVERS[:2])
    assert (tmp_path / "servers-test.json").exists()
    out = capsys.readouterr().out
    table = out.split(f"servers compared in this run ({', '.join(SERVERS[:2])}):\n", 1)[1].splitlines()
    assert [line.split()[0] for line in table[2:4]] == list(SERVERS[:2])


def test_the_command_line_error_is_the_parsers(benches, capsys):
    with pytest.raises(SystemExit) as exit_:
        command.main(["--scenarios", "warp"])
    assert exit_.value.code == 2
    assert "--scenarios takes names from" in capsys.readouterr().err
