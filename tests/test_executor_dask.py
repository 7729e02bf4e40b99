"""`quorem verify --executor dask://HOST:PORT` on a real Dask cluster.

One ``distributed.LocalCluster`` (a scheduler and two single-threaded worker processes on
loopback) serves the module. The proofs it gives are compared with the local pool's; a
worker killed in the middle of a run still leaves every result, each exactly once.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("z3")

from support import REPO

from quorem.cli import verify as cli
from quorem.cli.args import EXIT_INTERRUPTED
from quorem.verify import executor, jobs
from quorem.verify.executor import (
    DaskExecutor,
    ExecutorError,
    LocalPool,
    parse_executor,
)

needs_dask = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None,
    reason='distributed is not installed (pip install "quorem[dask]")',
)

CLAUSE_PAIRS = str(REPO / "rules" / "49-clause-pairs.rules")
NESTED_FLOORDIV = str(REPO / "tests" / "known_bugs" / "xla_nested_floordiv.rules")
# Two rules whose equivalence jobs take seconds each: a worker is busy when one ends.
NESTED_NEGATIVE = str(REPO / "rules" / "42-nested-negative.rules")
ALL_KINDS = ("equivalence", "int64", "termination", "termination-context")


def _verify(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main([*argv, "--no-record"])  # the repository's files keep their records
    out, err = capsys.readouterr()
    return code, out, err


def _statuses(out: str) -> list[tuple[Any, ...]]:
    """Each result of a ``--json`` report as what must not depend on where it was proven."""
    return [
        (r["name"], r["file"], r["line"], r["semantics"], r["obligation"], r["status"])
        for r in json.loads(out)["rules"]
    ]


# ---------------------------------------------------------------- the option
@pytest.mark.parametrize(
    "text",
    [
        "dask://",
        "dask://127.0.0.1",
        "dask://127.0.0.1:port",
        "dask://127.0.0.1:99999",
        "dask://127.0.0.1:0",
        "dask://127.0.0.1:8786/path",
        "dask://127.0.0.1:8786?x=1",
        "tcp://127.0.0.1:8786",
        "127.0.0.1:8786",
        "locale",
    ],
)
def test_a_bad_executor_is_a_usage_error(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _verify([CLAUSE_PAIRS, "--executor", text], capsys)
    assert code == cli.EXIT_USAGE
    assert "quorem verify: error: argument --executor: expected local or dask://HOST:PORT" in err
    assert "Traceback" not in err and not out


@needs_dask
def test_executor_urls_name_a_scheduler() -> None:
    assert parse_executor("local").address is None
    assert str(parse_executor("local")) == "local"
    spec = parse_executor("dask://127.0.0.1:8786")
    assert spec.address == "tcp://127.0.0.1:8786"
    assert str(spec) == "dask://127.0.0.1:8786"
    assert parse_executor("dask://[::1]:8786").address == "tcp://[::1]:8786"
    assert parse_executor("dask://scheduler.example:8786").address == (
        "tcp://scheduler.example:8786"
    )


def test_without_distributed_the_extra_is_named(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    code, _, err = _verify([CLAUSE_PAIRS, "--executor", "dask://127.0.0.1:8786"], capsys)
    assert code == cli.EXIT_USAGE
    assert 'pip install "quorem[dask]"' in err
    with pytest.raises(ExecutorError, match="not installed"):
        parse_executor("dask://127.0.0.1:8786")


@needs_dask
def test_an_unreachable_scheduler_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(executor, "CONNECT_TIMEOUT", 1.0)
    start = time.perf_counter()
    code, out, err = _verify(
        [CLAUSE_PAIRS, "--no-cache", "--executor", f"dask://127.0.0.1:{port}"], capsys
    )
    assert code == cli.EXIT_USAGE
    assert (
        f"quorem verify: error: cannot reach the Dask scheduler at dask://127.0.0.1:{port}" in err
    )
    assert "within 1 s" in err and "Traceback" not in err
    assert not out  # nothing was proven
    assert time.perf_counter() - start < 30


def test_the_local_pool_maps_items_as_they_finish() -> None:
    got = list(LocalPool(2).map_items(abs, [-3, 1, -2, 5], order=[3, 2, 1, 0]))
    assert sorted(got) == [(0, 3), (1, 1), (2, 2), (3, 5)]
    assert list(LocalPool(1).map_items(abs, [-3, 1], order=[1, 0])) == [(1, 1), (0, 3)]


# ---------------------------------------------------------------- on a real cluster
@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed")
    import cloudpickle

    # The helpers below run on the workers, which cannot import this test module by name.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as c:
        yield c
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def client(cluster: Any) -> Iterator[Any]:
    import distributed

    with distributed.Client(cluster, set_as_default=False) as c:
        yield c


@pytest.fixture
def url(cluster: Any, client: Any) -> str:
    client.wait_for_workers(2, timeout=60)  # after a kill, the nanny starts another
    address: str = cluster.scheduler_address
    return "dask://" + address.removeprefix("tcp://")


@pytest.mark.slow
@needs_dask
def test_a_rules_file_gets_the_local_pools_report(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Same statuses, files, lines and order; the unsound rule's report says file:line."""
    files = [CLAUSE_PAIRS, NESTED_FLOORDIV]
    local = _verify([*files, "--no-cache", "--json", "--jobs", "2"], capsys)
    remote = _verify([*files, "--no-cache", "--json", "--executor", url], capsys)
    assert local[0] == remote[0] == cli.EXIT_UNSOUND
    assert _statuses(remote[1]) == _statuses(local[1])
    statuses = [s[-1] for s in _statuses(remote[1])]
    assert statuses.count("unsound") == 2 and len(statuses) == 28
    assert json.loads(remote[1])["summary"]["proven"] == 26
    code, out, _ = _verify([*files, "--no-cache", "--executor", url], capsys)
    assert code == cli.EXIT_UNSOUND
    assert "tests/known_bugs/xla_nested_floordiv.rules:3: rule nested-floordiv-any-sign" in out


@needs_dask
def test_a_proof_alone_in_a_new_process_from_a_dask_worker(client: Any) -> None:
    """Dask workers are daemonic processes, which multiprocessing allows no children."""
    workers = set(client.run(os.getpid).values())
    assert all(client.run(_daemonic).values())
    pid = client.submit(executor.in_new_process, os.getpid, pure=False).result()
    assert pid not in workers and pid != os.getpid()
    failed = client.submit(executor.in_new_process, int, "x", pure=False)
    with pytest.raises(ValueError, match="invalid literal"):
        failed.result()
    # A job left undecided is run again so, as quorem verify does (quorem.verify.jobs._run).
    (rule,) = [r for r in jobs.load_rules([CLAUSE_PAIRS]) if r.name == "le-and-ne"]
    from quorem.verify.prove import obligations_of

    job = jobs.Job.of(obligations_of(rule, 2), 10.0)
    alone = client.submit(executor.in_new_process, jobs._run_once, job, {rule.name: rule})
    assert [r["status"] for r in alone.result()] == ["proven", "proven-int64"]


def _daemonic() -> bool:
    import multiprocessing

    return bool(multiprocessing.current_process().daemon)


@needs_dask
def test_workers_running_another_prover_are_refused(
    url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Their results would be cached under this prover's keys: an error, not a result."""
    monkeypatch.setattr(executor, "_prover", lambda: "quorem 0000, Z3 0.0")
    code, out, err = _verify([CLAUSE_PAIRS, "--no-cache", "--json", "--executor", url], capsys)
    assert code == cli.EXIT_USAGE
    assert "a Dask worker runs another prover" in err and "quorem 0000, Z3 0.0" in err
    assert not out


@needs_dask
def test_closing_a_map_cancels_its_tasks(client: Any) -> None:
    dask = DaskExecutor(client)
    results = dask.map_items(time.sleep, [0.5] * 8)
    first = next(results)
    assert first[1] is None
    results.close()
    deadline = time.monotonic() + 10
    while client.run_on_scheduler(_quorem_tasks) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not client.run_on_scheduler(_quorem_tasks)


@needs_dask
def test_the_throughput_benchmark_against_a_cluster(url: str, tmp_path: Path) -> None:
    from benchmarks import dask_throughput

    argv = ["--address", url, "--files", CLAUSE_PAIRS, "--repeats", "2", "--out", str(tmp_path)]
    assert dask_throughput.main(argv) == 0
    report = json.loads((tmp_path / "dask_throughput.json").read_text())
    assert report["obligations"] == 24 and report["statuses_identical"]
    (series,) = report["series"]
    assert series["executor"] == "dask" and series["workers"] == 2
    assert len(series["seconds"]) == 2 and series["obligations_per_second"] > 0
    assert (tmp_path / "dask_throughput.svg").read_text().startswith("<svg")


@pytest.mark.slow
@needs_dask
def test_ctrl_c_cancels_the_tasks_on_the_cluster(url: str, client: Any, tmp_path: Path) -> None:
    """SIGINT: exit 130 at once, no traceback, and the scheduler holds none of our tasks."""
    offset_pairs = str(REPO / "rules" / "35-offset-pairs.rules")
    argv = [sys.executable, "-m", "quorem", "verify", NESTED_NEGATIVE, offset_pairs, "--no-record"]
    proc = subprocess.Popen(
        [*argv, "--no-cache", "--executor", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the signal goes to the command, not to the cluster
        env={**os.environ, "QUOREM_CACHE_DIR": str(tmp_path)},
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()  # a result has arrived: the run is under way
    assert first, proc.stderr.read() if proc.stderr else ""
    assert client.run_on_scheduler(_quorem_tasks)
    os.kill(proc.pid, signal.SIGINT)
    start = time.monotonic()
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - start < 10
    if proc.returncode == cli.EXIT_PROVEN:
        pytest.skip("the run finished before the interrupt arrived")
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert "Traceback" not in err and "interrupted" in err
    deadline = time.monotonic() + 10
    while client.run_on_scheduler(_quorem_tasks) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not client.run_on_scheduler(_quorem_tasks)


def _quorem_tasks(dask_scheduler: Any) -> list[str]:
    return [str(k) for k in dask_scheduler.tasks if str(k).startswith("quorem-")]


def _die_once(marker: str, item: int) -> tuple[int, int]:
    """``item`` squared; the first call for item 3 kills its worker process instead."""
    if item == 3:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pass
        else:
            os.close(fd)
            os._exit(1)
    time.sleep(0.1)
    return item * item, os.getpid()


@needs_dask
def test_a_task_whose_worker_dies_is_run_again(client: Any, tmp_path: Path) -> None:
    marker = tmp_path / "died"
    got = list(DaskExecutor(client).map_unordered(_die_once, range(8), str(marker)))
    assert marker.exists()  # a worker did die
    assert sorted(i for i, _ in got) == list(range(8))  # every result, each once
    assert all(square == i * i for i, (square, _) in got)


@pytest.mark.slow
@needs_dask
def test_a_worker_killed_in_the_middle_of_a_run(
    url: str, client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker killed while proving: every obligation still has its own status, once."""
    rules = jobs.load_rules([NESTED_NEGATIVE])
    local = cli.verify_rules(rules, [NESTED_NEGATIVE], kinds=ALL_KINDS, jobs=2)
    killed: list[int] = []

    def kill_a_busy_worker(result: dict[str, Any]) -> None:
        if killed:
            return
        busy = [w for w, keys in client.processing().items() if keys]
        assert busy, "no worker is proving: the run ended before the kill"
        pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    with executor.open_executor(parse_executor(url), 1) as dask:
        remote = cli.verify_rules(
            rules,
            [NESTED_NEGATIVE],
            kinds=ALL_KINDS,
            progress=kill_a_busy_worker,
            executor=dask,
        )
    assert killed and killed[0] not in client.run(os.getpid).values()
    # A task was running on the killed worker and ran again elsewhere.
    assert client.run_on_scheduler(_lost_tasks)

    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        return (r["name"], r["semantics"], r["obligation"], r["status"], r["file"], r["line"])

    assert [key(r) for r in remote] == [key(r) for r in local]
    assert len(remote) == 8 and all(r["status"].startswith("proven") for r in remote)


def _lost_tasks(dask_scheduler: Any) -> list[str]:
    """The quorem tasks that went from processing back to released (their worker died)."""
    return [
        str(key)
        for key, start, finish, *_ in dask_scheduler.transition_log
        if str(key).startswith("quorem-worker_job")
        and (start, finish) == ("processing", "released")
    ]


@pytest.mark.slow
@needs_dask
def test_discover_proves_its_candidates_on_the_cluster(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`quorem discover --executor dask://` keeps the same proven rules as in-process proofs."""
    from quorem.cli.main import main
    from quorem.rules import rule_files

    corpus = REPO / "tests" / "data" / "discover_corpus.jsonl"
    args = ["discover", str(corpus), "--only-rules", "--patterns", "1", "--rounds", "1", "--json"]
    for f in rule_files():
        if f.name != "20-divmod-identity.rules":
            args += ["--rules", str(f)]
    assert main(args) == 0
    here = json.loads(capsys.readouterr().out)
    assert main([*args, "--executor", url]) == 0
    there = json.loads(capsys.readouterr().out)
    assert here["kept"] and here["kept"] == there["kept"]
    assert [(p["status"], p["text"]) for p in here["proposals"]] == [
        (p["status"], p["text"]) for p in there["proposals"]
    ]
    assert there["ops_after"] == here["ops_after"] < there["ops_before"]
