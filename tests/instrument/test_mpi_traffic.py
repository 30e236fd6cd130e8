"""Under a real mpiexec: exact messages, bytes and visits of known patterns; failures and MPI_Finalize."""

from __future__ import annotations

import pickle
import re
import sys
import warnings

import pytest

import extrap_plugins
from shim_helpers import PROGRAMS, mpi_program, records, run_program, series

COUNTS = ("visits", "bytes_sent", "bytes_received", "messages_sent", "messages_received")


def pickled(obj) -> int:
    return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def expected_rank(rank: int, size: int) -> dict[str, dict[str, int]]:
    """What tests/instrument/programs/patterns.py does on one rank, call path by call path."""
    left = (rank - 1) % size
    below, above = int(rank < size - 1), int(rank > 0)  # neighbours in the non-periodic halo
    root = int(rank == 0)
    total = size * (size - 1) // 2

    def calls(visits, sent=0, received=0, messages_sent=0, messages_received=0):
        return {"visits": visits, "bytes_sent": sent, "bytes_received": received,
                "messages_sent": messages_sent, "messages_received": messages_received}

    leaves = {
        "main->ring->MPI_Isend": calls(3, 240, 0, 3, 0),
        "main->ring->MPI_Recv": calls(3, 0, 240, 0, 3),
        "main->ring->MPI_Sendrecv": calls(1, pickled({"rank": rank}), pickled({"rank": left}), 1, 1),
        "main->ring->MPI_Wait": calls(3),
        # an irecv without a buffer counts its message, not its bytes
        "main->nonblocking->MPI_Irecv": calls(2, 0, 80, 0, 2),
        "main->nonblocking->MPI_Isend": calls(2, 80 + pickled(rank), 0, 2, 0),
        "main->nonblocking->MPI_Waitall": calls(1),
        "main->nonblocking->MPI_Wait": calls(2),
        "main->nonblocking->MPI_Test": calls(1),
        "main->halo->MPI_Cart_create": calls(1),
        "main->halo->MPI_Sendrecv": calls(2, 24 * (below + above), 24 * (above + below), below + above, above + below),
        "main->halo->MPI_Cart_sub": calls(1),
        "main->halo->MPI_Barrier": calls(1),
        "main->reduce->MPI_Reduce": calls(1, 32, 32 * root, 1, root),
        # IN_PLACE Allreduce of 4 int64, allreduce of an int, Allreduce of 3 doubles on the split halves
        "main->reduce->MPI_Allreduce": calls(3, 32 + pickled(rank) + 24, 32 + pickled(total) + 24, 3, 3),
        "main->reduce->MPI_Gather": calls(1, 16, 16 * size * root, 1, root),
        "main->reduce->MPI_Bcast": calls(1, 32 * root, 32 * (1 - root), root, 1 - root),
        "main->reduce->MPI_Comm_split": calls(1),
        "main->reduce->MPI_Comm_dup": calls(1),
    }
    result = dict(leaves)
    for parent in ("main->ring", "main->nonblocking", "main->halo", "main->reduce", "main"):
        below_parent = [v for k, v in leaves.items() if k.startswith(parent + "->")]
        result[parent] = {m: sum(v[m] for v in below_parent) for m in COUNTS}
        result[parent]["visits"] = 1
    return result


@pytest.mark.parametrize("size", [1, 2, 4])
def test_exact_counts_of_a_ring_a_halo_exchange_and_reductions(mpiexec, tmp_path, size):
    result = mpi_program(mpiexec, "patterns", size, tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"appended the measurements of {size} ranks" in result.stderr or size == 1
    [record] = records(tmp_path / "out.extrap.jsonl")
    assert record["status"] == "ok" and record["size"] == size and record["ranks"] == size
    assert record["parameters"] == {"p": size}
    ranks = [expected_rank(r, size) for r in range(size)]
    assert set(record["callpaths"]) == set(ranks[0])
    for metric in COUNTS:
        for path in ranks[0]:
            values = [ranks[r][path][metric] for r in range(size)]
            got = {s: series(record, metric, s)[path] for s in ("sum", "mean", "min", "max")}
            assert got == {"sum": sum(values), "mean": sum(values) / size, "min": min(values), "max": max(values)}, \
                (path, metric)
    inclusive, exclusive = series(record, "time"), series(record, "time_exclusive")
    for path in record["callpaths"]:
        assert inclusive[path] >= exclusive[path] >= 0
    assert series(record, "time")["main"] >= series(record, "time")["main->ring"]


def test_a_rank_that_raises_leaves_per_rank_files_and_a_clear_message(mpiexec, tmp_path):
    result = mpi_program(mpiexec, "fails", 3, tmp_path, EXTRAP_RUN_ID="failing-run")
    assert result.returncode != 0
    assert "ZeroDivisionError: rank one divides by zero" in result.stderr
    assert "rank 1 failed: ZeroDivisionError: rank one divides by zero; each rank wrote its own measurements" \
        in result.stderr
    assert result.stderr.count("each rank wrote its own measurements") == 1  # rank 0 says it for all
    assert not (tmp_path / "out.extrap.jsonl").exists()
    fragments = sorted(tmp_path.glob("out.failing-run.rank*.extrap.jsonl"))
    assert [f.name for f in fragments] == [f"out.failing-run.rank{r}.extrap.jsonl" for r in range(3)]
    lines = [records(f)[0] for f in fragments]
    assert [line["rank"] for line in lines] == [0, 1, 2]
    assert [line["status"] for line in lines] == ["partial", "failed", "partial"]
    for line in lines:  # nothing measured is lost: each rank's main and its Allreduce
        assert series(line, "visits") == {"main": 1, "main->MPI_Allreduce": 1}
        assert series(line, "bytes_sent")["main->MPI_Allreduce"] == 16
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the run is all there is: its error alone, no warning repeating it
        with pytest.raises(extrap_plugins.InputError) as error:
            extrap_plugins.read(tmp_path)
    assert str(error.value) == f"{fragments[0]}:1: rank 1 failed: ZeroDivisionError: rank one divides by zero"


def test_a_program_that_ends_with_the_builtin_exit_and_a_message_is_a_failed_run(mpiexec, tmp_path):
    # exit("...") ends with status 1 without passing through sys.exit: every rank wrote an "ok" run of nothing,
    # and the reader failed on it with an internal error
    result = mpi_program(mpiexec, "exits", 3, tmp_path, EXTRAP_RUN_ID="exiting")
    assert result.returncode != 0
    assert ("ranks 0, 1, 2 failed: the program called exit('n = 7 is not supported'); each rank wrote its own "
            "measurements") in result.stderr
    assert not (tmp_path / "out.extrap.jsonl").exists()
    fragments = sorted(tmp_path.glob("out.exiting.rank*.extrap.jsonl"))
    lines = [records(f)[0] for f in fragments]
    assert [line["status"] for line in lines] == ["failed"] * 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the run is all there is: its error alone, no warning repeating it
        with pytest.raises(extrap_plugins.InputError) as error:
            extrap_plugins.read(tmp_path)
    assert str(error.value) == (f"{fragments[0]}:1: ranks 0, 1, 2 failed: the program called "
                                "exit('n = 7 is not supported')")


def test_a_program_that_calls_mpi_finalize_itself_still_gets_its_data(mpiexec, tmp_path):
    result = mpi_program(mpiexec, "finalize", 2, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("finalized True") == 2
    [record] = records(tmp_path / "out.extrap.jsonl")
    assert series(record, "visits") == {"main": 2, "main->MPI_Allreduce": 10}  # main: open at MPI_Finalize
    assert series(record, "bytes_sent")["main"] == 2 * 5 * 16


def test_a_rank_arriving_after_the_timeout_makes_every_rank_write_its_own_file(mpiexec, tmp_path):
    result = mpi_program(mpiexec, "late", 3, tmp_path, EXTRAP_EXIT_TIMEOUT="1")
    assert result.returncode == 0, result.stderr
    assert re.search(r"ranks? (\d, )*1(, \d)* did not reach the end within 1 s \(EXTRAP_EXIT_TIMEOUT\); "
                     r"each rank wrote its own measurements", result.stderr)
    assert result.stderr.count("each rank wrote its own measurements") == 1
    assert not (tmp_path / "out.extrap.jsonl").exists()
    fragments = sorted(tmp_path.glob("out.*.rank*.extrap.jsonl"))
    assert len(fragments) == 3
    experiment = extrap_plugins.read(tmp_path)  # the reader joins the run again
    coordinates, values = experiment.values_of("main->MPI_Bcast", "bytes_sent")
    assert coordinates.tolist() == [[3.0]]
    assert values.tolist() == [40 / 3]  # rank 0 sent 40 bytes; mean over 3 ranks
    _, received = experiment.values_of("main->MPI_Bcast", "messages_received")
    assert received.tolist() == [2 / 3]


def test_a_rank_that_fails_while_rank_0_is_busy_keeps_its_own_error_in_its_file(mpiexec, tmp_path):
    # rank 0 did not answer rank 1's exit gather: rank 1's file said only that, its ZeroDivisionError was lost
    result = mpi_program(mpiexec, "fails_alone", 3, tmp_path, EXTRAP_RUN_ID="alone", EXTRAP_EXIT_TIMEOUT="0.5")
    assert result.returncode != 0
    [line] = records(tmp_path / "out.alone.rank1.extrap.jsonl")
    assert line["status"] == "failed"
    assert line["errors"] == ["rank 1 failed: ZeroDivisionError: rank one divides by zero; "
                              "rank 0 did not answer within 0.5 s"]
    assert ("rank 1 failed: ZeroDivisionError: rank one divides by zero; rank 0 did not answer within 0.5 s; "
            "each rank wrote its own measurements") in result.stderr


def test_neighbourhood_collectives_matched_receives_and_exclusive_scans_count_exactly(mpiexec, tmp_path):
    # a single count was taken per rank of the communicator (4 on a ring of 4 ranks, not its 2 neighbours), an
    # allgatherv's send buffer was read as a vector, the receives of matched messages were not recorded, and
    # rank 0 of an Exscan counted a result it never receives
    command = [*mpiexec[:1], "-n", "4", *mpiexec[1:], sys.executable, "-m", "extrap_plugins.instrument",
               str(PROGRAMS / "more_patterns.py")]
    result = run_program(command, tmp_path)
    assert result.returncode == 0, result.stderr
    [record] = records(tmp_path / "out.extrap.jsonl")
    expected = {  # every rank alike: (visits, bytes sent, bytes received, messages sent, messages received)
        "main->MPI_Neighbor_alltoallv": (2, 24 + 8, 24 + 8, 2, 2),
        "main->MPI_Neighbor_allgatherv": (1, 12, 24, 1, 1),
        "main->MPI_Send": (3, 40 + pickled({"rank": 0}) + 16, 0, 3, 0),
        "main->MPI_Mprobe": (3, 0, 0, 0, 0),
        "main->MPI_Mrecv": (2, 0, 40 + pickled({"rank": 0}), 0, 2),
        "main->MPI_Imrecv": (1, 0, 16, 0, 1),
        "main->MPI_Wait": (1, 0, 0, 0, 0),
    }
    for path, values in expected.items():
        for metric, value in zip(COUNTS, values):
            assert {series(record, metric, s)[path] for s in ("min", "max")} == {value}, (path, metric)
    # Exscan of 3 doubles and exscan of the rank on every rank; ranks 1 to 3 receive, rank 0 does not
    exscan = {metric: series(record, metric)["main->MPI_Exscan"] for metric in COUNTS}
    assert exscan == {"visits": 8, "bytes_sent": 4 * 24 + 4 * pickled(0), "bytes_received": 3 * 24 + 3 * pickled(0),
                      "messages_sent": 8, "messages_received": 6}


def test_rooted_collectives_on_an_intercommunicator_count_the_roots_part_and_the_other_groups(mpiexec, tmp_path):
    # MPI.ROOT and MPI.PROC_NULL were taken for ranks: the root counted a receive, the rank 0 of the other group
    # the root's send, and the root's idle group members a receive
    result = mpi_program(mpiexec, "intercomm", 4, tmp_path)
    assert result.returncode == 0, result.stderr
    [record] = records(tmp_path / "out.extrap.jsonl")
    bcast = 32 + pickled({"x": 1})
    expected = {  # summed over the ranks: rank 0 is the root; ranks 1 and 3 the other group; rank 2 takes no part
        "main->MPI_Bcast": (8, bcast, 2 * bcast, 2, 4),
        "main->MPI_Reduce": (4, 2 * 16, 16, 2, 1),
        "main->MPI_Gather": (8, 2 * 8 + pickled(1) + pickled(3), 16 + pickled(1) + pickled(3), 4, 2),
        "main->MPI_Scatter": (4, 16, 2 * 8, 1, 2),
    }
    for path, values in expected.items():
        assert tuple(series(record, metric)[path] for metric in COUNTS) == values, path
    assert series(record, "bytes_sent", "max")["main"] == bcast + 16  # rank 0: Bcast, bcast, its Scatter


@pytest.fixture(scope="module")
def shared_world(mpiexec, tmp_path_factory):
    """tests/instrument/programs/shared_world.py on 3 ranks: its run, and the folder it wrote to."""
    folder = tmp_path_factory.mktemp("shared_world")
    return mpi_program(mpiexec, "shared_world", 3, folder, EXTRAP_EXIT_TIMEOUT="5"), folder


def test_a_thread_receiving_any_message_at_the_end_does_not_take_the_shims_own(shared_world):
    # rank 0's thread waiting on MPI.COMM_WORLD for any source and tag got rank 1's measurements, sent as rank 1
    # ended, instead of rank 2's "bye"; rank 0 waited EXTRAP_EXIT_TIMEOUT for them, then every rank wrote a file
    # of its own ("rank 1 did not reach the end")
    result, folder = shared_world
    assert result.returncode == 0, result.stderr
    assert result.stdout == "rank 0 heard ['bye']\n"
    assert "appended the measurements of 3 ranks" in result.stderr
    assert [path.name for path in folder.iterdir()] == ["out.extrap.jsonl"]
    [record] = records(folder / "out.extrap.jsonl")
    assert record["status"] == "ok" and record["errors"] == []
    bye = pickled("bye")  # the thread's receive is recorded in its own tree, and nothing else it could have taken
    assert {metric: series(record, metric)["MPI_Recv"] for metric in COUNTS} == {
        "visits": 1, "bytes_sent": 0, "bytes_received": bye, "messages_sent": 0, "messages_received": 1}


def test_vector_collectives_given_one_count_on_an_intercommunicator_count_one_block_per_remote_rank(shared_world):
    # the local group's size was taken for the remote one's: rank 0 (ROOT, with rank 2 in its group) counted
    # two blocks from rank 1's group of one, and rank 1 one block where the other group has two ranks
    result, folder = shared_world
    [record] = records(folder / "out.extrap.jsonl")
    expected = {  # summed over the ranks: (visits, bytes sent, bytes received, messages sent, messages received)
        "vectors->MPI_Gatherv": (3, 16, 16, 1, 1),  # rank 1 sends 2 doubles, the root receives them
        "vectors->MPI_Scatterv": (3, 24, 24, 1, 1),  # the root sends 3 doubles to rank 1
        "vectors->MPI_Alltoallv": (3, 4 + 4 + 8, 4 + 4 + 8, 3, 3),  # one int to each remote rank, one from each
        "vectors->MPI_Allgatherv": (3, 3 * 8, 8 + 8 + 16, 3, 3),  # one double from each remote rank
    }
    for path, values in expected.items():
        assert tuple(series(record, metric)[path] for metric in COUNTS) == values, path


def test_the_intercommunicator_of_spawned_processes_records_its_calls(mpiexec, tmp_path):
    # Spawn was not recorded and its intercommunicator not wrapped: the run had main alone
    command = [*mpiexec[:1], "-n", "2", *mpiexec[1:], sys.executable, "-m", "extrap_plugins.instrument",
               str(PROGRAMS / "spawns.py")]
    result = run_program(command, tmp_path)
    assert result.returncode == 0, result.stderr
    [record] = records(tmp_path / "out.extrap.jsonl")  # the spawned processes, run without the shim, write none
    assert record["size"] == 2
    assert {path: tuple(series(record, metric)[path] for metric in COUNTS) for path in record["callpaths"]} == {
        "main": (2, 32, 0, 1, 0),
        "main->MPI_Comm_spawn": (2, 0, 0, 0, 0),
        "main->MPI_Bcast": (2, 32, 0, 1, 0),  # rank 0 (MPI.ROOT) sends; rank 1 (MPI.PROC_NULL) takes no part
    }


def test_vector_collectives_given_numpy_counts_count_each_ranks_block(shared_world):
    # counts as a numpy array made MPI.IN_PLACE count an even share of the buffer, not the rank's block, a numpy
    # array of recvcounts and a numpy number as the one count were not counted at all (with a warning)
    result, folder = shared_world
    assert "cannot count" not in result.stderr
    [record] = records(folder / "out.extrap.jsonl")
    expected = {  # summed over 3 ranks, rank k having k + 1 doubles: 8 (k + 1) bytes of a buffer of 48
        # IN_PLACE at the root: its own block of 8 is sent; then a count of 2 doubles from each rank
        "numpy_counts->MPI_Gatherv": (6, 8 + 16 + 24 + 3 * 16, 48 + 48, 6, 2),
        "numpy_counts->MPI_Scatterv": (3, 48, 8 + 16 + 24, 1, 3),
        "numpy_counts->MPI_Allgatherv": (3, 8 + 16 + 24, 3 * 48, 3, 3),
        "numpy_counts->MPI_Reduce_scatter": (3, 3 * 48, 8 + 16 + 24, 3, 3),
    }
    for path, values in expected.items():
        assert tuple(series(record, metric)[path] for metric in COUNTS) == values, path
    assert series(record, "bytes_sent", "max")["numpy_counts->MPI_Allgatherv"] == 24  # rank 2's block, not 48 / 3
