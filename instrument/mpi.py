"""MPI traffic: a communicator that records every MPI call it makes.

::

    from mpi4py import MPI
    from extrap_plugins import instrument

    comm = instrument.mpi.wrap(MPI.COMM_WORLD)
    comm.Allreduce(local, total)      # recorded as <current call path>->MPI_Allreduce

:func:`wrap` returns an instance of a subclass of the communicator's own
class (``MPI.Intracomm``, ``MPI.Cartcomm``, ...), sharing its handle: it is
an mpi4py communicator wherever one is expected, and communicators derived
from it (``Dup``, ``Split``, ``Create_cart``, ``Sub``, ...) are wrapped too.
Each call becomes a child region named after the MPI function
(``MPI_Send``, ``MPI_Allreduce``, ``MPI_Comm_split``), with its time and
visits, and the messages and exact bytes this rank sent and received in it.

What is counted is what the application asks for through mpi4py, not the
messages inside the MPI library:

============================  ==============================  ==================================
call                          sent (1 message + bytes)        received (1 message + bytes)
============================  ==============================  ==================================
Send, Isend, Ssend, ... send   the buffer / pickled object     --
Recv, recv, Sendrecv           (Sendrecv: the send buffer)     what arrived (from the status)
Irecv, irecv                   --                              the receive buffer's size
Message.Recv, recv (MPI_Mrecv) --                              what arrived (from the status)
Message.Irecv, irecv           --                              the receive buffer's size
Bcast, bcast                   at the root: the buffer         elsewhere: the buffer
Reduce, reduce                 every rank: its contribution    at the root: the result
Allreduce, Scan, Exscan        the contribution                the result (Exscan: not on rank 0)
Gather(v), gather              the contribution                at the root: all blocks
Scatter(v), scatter            at the root: all blocks         the block
Allgather(v), Alltoall(v, w)   the send buffer                 the receive buffer
Reduce_scatter(_block)         the contribution                the block
Neighbor_* collectives         the send buffer                 the receive buffer
Barrier, Probe, Comm_split..   --                              --
============================  ==============================  ==================================

On an intercommunicator the root of a rooted call (``MPI.ROOT``) does the
root's part alone, the ranks of the other group (passing the root's rank)
the part of every rank, and the rest of the root's group
(``MPI.PROC_NULL``) nothing.  A single count of a vector buffer
(``[buf, 3]``) is one per rank (of the remote group on an
intercommunicator), and per neighbour in the neighbourhood collectives.
``Mprobe``, ``mprobe``, ``Improbe`` and ``improbe`` return messages whose
receives are recorded.

Buffer sizes are exact: ``count × MPI_Type_size`` for ``[buf, count, type]``
and the vector forms, the buffer's size otherwise.  ``MPI.IN_PLACE`` counts
the data taken from the receive buffer (the whole buffer for reductions,
this rank's block for gathers).  Lower-case calls count the pickled size of
the objects (``MPI.pickle.dumps``, computed after the call, outside its
timed interval; a float's, bool's, None's, int's or numpy number's size is
decided by its kind and magnitude alone, so it is pickled once per kind and
remembered: replace ``MPI.pickle`` or set its ``PROTOCOL`` before the first
lower-case call, not after).  Calls to or from ``MPI.PROC_NULL`` count no
message.
Completion calls are timed regions of their own (``MPI_Wait``, ``MPI_Waitall``,
``MPI_Test``, ``MPI_Testany``, ...; their messages were counted when the
request was started): ``request.Wait()`` on a request a recording communicator
returned, and ``MPI.Request.Waitall(requests)`` and the other class methods
once the shim is loaded, which makes ``MPI.Request`` the recording request
class (``isinstance`` and ``issubclass`` with it answer as with mpi4py's own;
a ``Request`` imported by name before the first :func:`wrap` stays mpi4py's).
Not counted: persistent requests (``Send_init``...), one-sided calls
(``MPI.Win``), MPI-IO (``MPI.File``), and the bytes of a lower-case
``irecv`` without a buffer (its message is).
"""

from __future__ import annotations

import functools
import inspect
import numbers
import sys
import warnings
from time import perf_counter
from typing import Any, Callable

from . import regions

_classes: dict[type, type] | None = None
_wrapped_types: tuple[type, ...] = ()
_warned: set[str] = set()

# Filled by _load() from mpi4py (never imported before wrap() is called).
_MPI: Any = None
_PROC_NULL = None
_ROOT = None
_IN_PLACE = None
_BYTE = None
_REQUEST: Any = None
"""mpi4py's own ``MPI.Request`` (the module's name is the recording class once loaded)."""
_RecordingRequest: Any = None
_MESSAGE: Any = None
_RecordingMessage: Any = None
_type_sizes: dict[str, int] = {}


def wrap(comm):
    """Return ``comm`` as a recording communicator (the same MPI handle).

    With ``EXTRAP_INSTRUMENT=0`` the communicator itself is returned.
    Wrapping a wrapped communicator, or ``MPI.COMM_NULL``, returns it
    unchanged.  The first wrap of ``MPI.COMM_WORLD`` is collective (every
    rank calls it): the shim duplicates the world for its own messages.

    Raises
    ------
    TypeError
        ``comm`` is not an mpi4py communicator.
    RuntimeError
        MPI is not initialised yet, or finalised already (nothing could be recorded).
    """
    if regions._state.environment_off:
        return comm
    classes = _load()
    if isinstance(comm, _wrapped_types):
        return comm
    if not isinstance(comm, _MPI.Comm):
        raise TypeError(f"wrap() expects an mpi4py communicator such as MPI.COMM_WORLD, got {type(comm).__name__}")
    if not _MPI.Is_initialized() or _MPI.Is_finalized():
        raise RuntimeError("wrap() needs MPI initialised and not finalised: call it after MPI.Init() "
                           "(mpi4py.rc.initialize = False) and before MPI.Finalize()")
    from .session import session

    session.use(collective=comm == _MPI.COMM_WORLD)  # wrapping the world is collective: see attach_mpi
    if comm == _MPI.COMM_NULL:
        return comm
    for base in type(comm).__mro__:
        if base in classes:
            return classes[base](comm)
    raise TypeError(f"cannot wrap a communicator of type {type(comm).__name__}")


def is_wrapped(comm) -> bool:
    """Whether ``comm`` records its calls."""
    return bool(_wrapped_types) and isinstance(comm, _wrapped_types)


# ------------------------------------------------------------------ buffer sizes
def message_bytes(message, vector: bool = False, comm_size: int = 1) -> int:
    """The bytes described by an mpi4py buffer specification.

    Parameters
    ----------
    message : buffer or list
        ``buf``, ``[buf, type]``, ``[buf, count, type]``,
        ``[buf, (count, displ), type]``, and for the vector calls
        ``[buf, counts, displs, type]``, ``[buf, (counts, displs), type]``,
        ``[buf, counts]`` or (``Alltoallw``) a sequence of types.
    vector : bool
        Whether the call takes vector arguments (``Gatherv``, ``Alltoallv`` ...).
    comm_size : int
        The communicator size, for a vector call given one count for all ranks.
    """
    try:
        return message.nbytes  # numpy arrays and memoryviews: the fast, common case
    except AttributeError:
        pass
    if message is None or message is _IN_PLACE:
        return 0
    if isinstance(message, (list, tuple)):
        return _spec_bytes(message, vector, comm_size)
    return memoryview(message).nbytes


def _spec_bytes(spec, vector: bool, comm_size: int) -> int:
    if not spec:
        return 0
    buffer, rest = spec[0], list(spec[1:])
    types = None
    if rest and _is_type(rest[-1]):
        types = _type_size(rest.pop())
    elif rest and vector and isinstance(rest[-1], (list, tuple)) and rest[-1] and all(_is_type(t) for t in rest[-1]):
        types = [_type_size(t) for t in rest.pop()]  # Alltoallw: one type per rank
    if not rest or rest[0] is None:  # no count: the whole buffer
        whole = _buffer_bytes(buffer)
        if isinstance(types, list):
            return whole
        if types is not None:
            extent = types[1]
            return (whole // extent) * types[0] if extent else 0
        return whole
    counts = rest[0]
    if vector:
        counts = _vector_counts(counts, comm_size)
        if isinstance(types, list):
            return sum(c * s for c, (s, _) in zip(counts, types))
        element = types[0] if types is not None else _item_size(buffer)
        return sum(counts) * element
    if isinstance(counts, (tuple, list)):
        counts = counts[0]  # (count, displ)
    element = types[0] if types is not None else _item_size(buffer)
    return int(counts) * element


def _vector_counts(counts, size: int) -> list[int]:
    """The count of each rank's block: from a sequence (numpy's too), a ``(counts, displs)`` pair, or one count (an
    int or a numpy integer) for each of ``size`` ranks."""
    if isinstance(counts, tuple) and len(counts) == 2 and not isinstance(counts[0], numbers.Integral):
        counts = counts[0]  # (counts, displs)
    if isinstance(counts, numbers.Integral):
        return [int(counts)] * size
    return [int(c) for c in counts]


def _is_type(value) -> bool:
    return isinstance(value, (str, _MPI.Datatype))


def _type_size(datatype) -> tuple[int, int]:
    """(size, extent) of an MPI datatype or a type code such as ``'d'``."""
    if isinstance(datatype, str):
        found = _type_sizes.get(datatype)
        if found is None:
            converted = _MPI.Datatype.fromcode(datatype)
            found = _type_sizes[datatype] = (converted.Get_size(), converted.Get_extent()[1])
        return found
    return datatype.Get_size(), datatype.Get_extent()[1]


def _buffer_bytes(buffer) -> int:
    if buffer is None or buffer is _MPI.BOTTOM:
        return 0
    size = getattr(buffer, "nbytes", None)
    return int(size) if size is not None else memoryview(buffer).nbytes


def _item_size(buffer) -> int:
    size = getattr(buffer, "itemsize", None)
    return int(size) if size is not None else memoryview(buffer).itemsize


def _block(message, rank: int, size: int, vector: bool) -> int:
    """This rank's block of a gather/scatter buffer (for ``MPI.IN_PLACE``)."""
    if vector and isinstance(message, (list, tuple)) and len(message) > 1 and message[1] is not None \
            and not _is_type(message[1]):
        counts = _vector_counts(message[1], size)
        total = sum(counts)
        return message_bytes(message, True, size) * counts[rank] // total if total else 0
    return message_bytes(message, vector, size) // max(size, 1)


_pickled_sizes: dict[Any, int] = {}
"""Pickled sizes of scalars, by what decides them (see :func:`_pickled`)."""
_fixed_size_kinds: dict[type, bool] = {}
"""Whether every object of a type pickles to one size (see :func:`_fixed_size`), by type."""
_NUMPY_SCALARS = ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intc", "uintc",
                  "int_", "uint", "longlong", "ulonglong", "float16", "float32", "float64", "longdouble", "complex64",
                  "complex128", "clongdouble")


def _pickled(obj) -> int:
    """The size of ``obj`` pickled by ``MPI.pickle`` (what a lower-case call sends).

    A scalar's size depends only on its kind: every float pickles to the same
    bytes count (BINFLOAT's 8-byte payload), so do ``None``, ``True`` and
    ``False``, and an int's size is decided by its bit length (pickle picks
    BININT1, BININT2, BININT or LONG1 by magnitude; all negative ints down to
    -2**31 are BININT), and so is a numpy number's (``np.sum(a)``) by its
    type (:func:`_fixed_size`).  Those sizes are pickled once and remembered,
    which halves the cost of counting ``comm.allreduce(x)``; other objects
    (and large negative ints) are pickled every time.
    """
    kind = type(obj)
    if kind is int and obj >= -0x80000000:
        key: Any = obj.bit_length() if obj >= 0 else -1
    elif kind is float or kind is bool or obj is None:
        key = kind
    else:
        fixed = _fixed_size_kinds.get(kind)
        if fixed is None:
            fixed = _fixed_size_kinds[kind] = _fixed_size(kind)
        if not fixed:
            return len(_MPI.pickle.dumps(obj))
        key = kind
    try:
        return _pickled_sizes[key]
    except KeyError:
        size = _pickled_sizes[key] = len(_MPI.pickle.dumps(obj))
        return size


def _fixed_size(kind: type) -> bool:
    """Whether every object of ``kind`` pickles to one size: numpy's numeric scalars (their dtype and their
    value's bytes, of one length for the type), with pickle protocol 3 or later (protocol 2 writes those bytes as
    text of varying length)."""
    numpy = sys.modules.get("numpy")
    if numpy is None or kind not in {getattr(numpy, name, None) for name in _NUMPY_SCALARS}:
        return False
    protocol = getattr(_MPI.pickle, "PROTOCOL", None)
    return not (isinstance(protocol, int) and 0 <= protocol < 3)


def _pickled_items(objects) -> int:
    return 0 if objects is None else sum(_pickled(o) for o in objects)


# ----------------------------------------------------------------------- counters
# A counter is built per method from its signature, and then called after each
# call as ``count(comm, node, args, kwargs, result, status)``: it reads the
# arguments it needs through getters made from the signature (no binding of
# all arguments per call) and adds to the node's message and byte counts.

class _Signature:
    """Positions and defaults of an mpi4py method's parameters."""

    def __init__(self, original) -> None:
        signature = inspect.signature(original)
        self.names = [n for n in signature.parameters if n != "self"]
        self.defaults = {n: p.default for n, p in signature.parameters.items()
                         if n != "self" and p.default is not p.empty}

    def get(self, name: str) -> Callable[[tuple, dict], Any]:
        """A getter ``(args, kwargs) -> value`` of parameter ``name``."""
        index, default = self.where(name)

        def get(args, kwargs):
            return args[index] if len(args) > index else kwargs.get(name, default)

        return get

    def where(self, name: str) -> tuple[int, Any]:
        """Position and default of ``name``, for counters that read arguments inline (the hot ones)."""
        return self.names.index(name), self.defaults.get(name)


def _sent(node, nbytes: int) -> None:
    node.messages_sent += 1
    node.bytes_sent += nbytes


def _received(node, nbytes: int) -> None:
    node.messages_received += 1
    node.bytes_received += nbytes


def _point_send(buf: str, dest: str, pickled: bool = False) -> Callable:
    def build(sig: _Signature):
        (b, _), (d, _) = sig.where(buf), sig.where(dest)

        def count(comm, node, args, kwargs, result, status):
            n = len(args)
            if (args[d] if n > d else kwargs[dest]) != _PROC_NULL:
                message = args[b] if n > b else kwargs[buf]
                node.messages_sent += 1
                node.bytes_sent += _pickled(message) if pickled else message_bytes(message)
        return count
    return build


def _point_receive_status(sig: _Signature):
    def count(comm, node, args, kwargs, result, status):
        if status.Get_source() != _PROC_NULL:
            node.messages_received += 1
            node.bytes_received += status.Get_count(_BYTE)
    return count


def _point_receive_buffer(sig: _Signature):
    """The receive buffer's size (none, as an ``irecv`` may have: the message alone); a matched message's
    ``Irecv`` has no source (a message from ``MPI.PROC_NULL`` is not recorded, see :func:`_wrap_result`)."""
    get_buf = sig.get("buf") if "buf" in sig.names else None
    get_source = sig.get("source") if "source" in sig.names else None

    def count(comm, node, args, kwargs, result, status):
        if get_source is None or get_source(args, kwargs) != _PROC_NULL:
            _received(node, 0 if get_buf is None else message_bytes(get_buf(args, kwargs)))
    return count


def _sendrecv(send: str, pickled: bool = False, receive: str | None = None) -> Callable:
    def build(sig: _Signature):
        get_send, get_dest, get_source = sig.get(send), sig.get("dest"), sig.get("source")
        get_receive = sig.get(receive) if receive else None

        def count(comm, node, args, kwargs, result, status):
            if get_dest(args, kwargs) != _PROC_NULL:
                message = get_send(args, kwargs)
                _sent(node, _pickled(message) if pickled else message_bytes(message))
            if get_receive is None:  # blocking: what arrived
                if status.Get_source() != _PROC_NULL:
                    _received(node, status.Get_count(_BYTE))
            elif get_source(args, kwargs) != _PROC_NULL:
                _received(node, message_bytes(get_receive(args, kwargs)))
        return count
    return build


def _parts(comm, root) -> tuple[bool, bool]:
    """This rank's parts in a rooted collective: (the root's, a member's).

    The members contribute to a reduce or gather and receive a broadcast or
    scatter.  In an intracommunicator every rank is a member and one of them
    the root.  In an intercommunicator the root passes ``MPI.ROOT`` and is no
    member, the other ranks of its group pass ``MPI.PROC_NULL`` and take no
    part, and the ranks of the other group, passing the root's rank, are the
    members.
    """
    if root == _ROOT:
        return True, False
    if root == _PROC_NULL:
        return False, False
    return comm.Get_rank() == root and not comm.Is_inter(), True


def _bcast(sig: _Signature):
    get_buf, get_root = sig.get("buf"), sig.get("root")

    def count(comm, node, args, kwargs, result, status):
        root, member = _parts(comm, get_root(args, kwargs))
        if root:
            _sent(node, message_bytes(get_buf(args, kwargs)))
        elif member:
            _received(node, message_bytes(get_buf(args, kwargs)))
    return count


def _bcast_object(sig: _Signature):
    get_obj, get_root = sig.get("obj"), sig.get("root")

    def count(comm, node, args, kwargs, result, status):
        root, member = _parts(comm, get_root(args, kwargs))
        if root:
            _sent(node, _pickled(get_obj(args, kwargs)))
        elif member:
            _received(node, _pickled(result))
    return count


def _reduce(rooted: bool, exclusive: bool = False) -> Callable:
    """Reductions; an ``exclusive`` scan leaves rank 0's result undefined (it receives nothing)."""
    def build(sig: _Signature):
        (s, _), (r, _) = sig.where("sendbuf"), sig.where("recvbuf")
        get_root = sig.get("root") if rooted else None

        def count(comm, node, args, kwargs, result, status):
            n = len(args)
            send = args[s] if n > s else kwargs["sendbuf"]
            receive = args[r] if n > r else kwargs["recvbuf"]
            root, member = (False, True) if get_root is None else _parts(comm, get_root(args, kwargs))
            if member:
                node.messages_sent += 1
                node.bytes_sent += message_bytes(receive) if send is _IN_PLACE else message_bytes(send)
            if (get_root is None or root) and not (exclusive and comm.Get_rank() == 0):
                node.messages_received += 1
                node.bytes_received += message_bytes(receive)
        return count
    return build


def _reduce_object(rooted: bool) -> Callable:
    def build(sig: _Signature):
        i, default = sig.where("sendobj")
        get_root = sig.get("root") if rooted else None
        pickled = _pickled

        def count(comm, node, args, kwargs, result, status):
            root, member = (False, True) if get_root is None else _parts(comm, get_root(args, kwargs))
            if member:
                node.messages_sent += 1
                node.bytes_sent += pickled(args[i] if len(args) > i else kwargs.get("sendobj", default))
            if (get_root is None or root) and result is not None:
                node.messages_received += 1
                node.bytes_received += pickled(result)
        return count
    return build


def _peers(comm) -> int:
    """How many ranks the blocks of a collective's buffer are for: an intercommunicator's remote group, else all."""
    return comm.Get_remote_size() if comm.Is_inter() else comm.Get_size()


def _gather(vector: bool, everyone: bool) -> Callable:
    def build(sig: _Signature):
        get_send, get_receive = sig.get("sendbuf"), sig.get("recvbuf")
        get_root = None if everyone else sig.get("root")

        def count(comm, node, args, kwargs, result, status):
            rank, size = comm.Get_rank(), _peers(comm)
            send, receive = get_send(args, kwargs), get_receive(args, kwargs)
            root, member = (False, True) if get_root is None else _parts(comm, get_root(args, kwargs))
            if member:
                _sent(node, _block(receive, rank, size, vector) if send is _IN_PLACE else message_bytes(send))
            if get_root is None or root:
                _received(node, message_bytes(receive, vector, size))
        return count
    return build


def _scatter(vector: bool) -> Callable:
    def build(sig: _Signature):
        get_send, get_receive, get_root = sig.get("sendbuf"), sig.get("recvbuf"), sig.get("root")

        def count(comm, node, args, kwargs, result, status):
            rank, size = comm.Get_rank(), _peers(comm)
            send, receive = get_send(args, kwargs), get_receive(args, kwargs)
            root, member = _parts(comm, get_root(args, kwargs))
            if root:
                _sent(node, message_bytes(send, vector, size))
            if member:
                _received(node, _block(send, rank, size, vector) if receive is _IN_PLACE else message_bytes(receive))
        return count
    return build


def _exchange(vector: bool, neighbours: bool = False, one_block_sent: bool = False) -> Callable:
    """Alltoall(v, w) and the neighbourhood collectives: send buffer out, receive buffer in.

    A vector buffer's single count (``[buf, 3]``) is the count of each block: one block per rank, or for the
    neighbourhood collectives per neighbour (in-neighbours received from, out-neighbours sent to).  An
    allgather's send buffer (``one_block_sent``) is one plain block.
    """
    def build(sig: _Signature):
        get_send, get_receive = sig.get("sendbuf"), sig.get("recvbuf")

        def count(comm, node, args, kwargs, result, status):
            sources, destinations = comm.degrees if neighbours else (_peers(comm),) * 2
            send, receive = get_send(args, kwargs), get_receive(args, kwargs)
            received = message_bytes(receive, vector, sources)
            _sent(node, received if send is _IN_PLACE else message_bytes(send, vector and not one_block_sent,
                                                                         destinations))
            _received(node, received)
        return count
    return build


def _reduce_scatter(block: bool) -> Callable:
    def build(sig: _Signature):
        get_send, get_receive = sig.get("sendbuf"), sig.get("recvbuf")
        get_counts = None if block else sig.get("recvcounts")

        def count(comm, node, args, kwargs, result, status):
            rank, size = comm.Get_rank(), comm.Get_size()
            send, receive = get_send(args, kwargs), get_receive(args, kwargs)
            if send is not _IN_PLACE:
                _sent(node, message_bytes(send))
                _received(node, message_bytes(receive))
                return
            whole = message_bytes(receive)
            _sent(node, whole)
            counts = None if get_counts is None else get_counts(args, kwargs)
            if counts is not None:
                counts = _vector_counts(counts, size)
                total = sum(counts)
                _received(node, whole * counts[rank] // total if total else 0)
            else:
                _received(node, whole // max(size, 1))
        return count
    return build


def _objects(send: str, *, gather_root: bool = False, scatter_root: bool = False,
             all_send: bool = False, all_receive: bool = False) -> Callable:
    """Lower-case collectives of Python objects."""
    def build(sig: _Signature):
        get_send = sig.get(send)
        get_root = sig.get("root") if gather_root or scatter_root else None

        def count(comm, node, args, kwargs, result, status):
            obj = get_send(args, kwargs)
            root, member = (False, True) if get_root is None else _parts(comm, get_root(args, kwargs))
            if scatter_root:
                if root:
                    _sent(node, _pickled_items(obj))
                if member:
                    _received(node, _pickled(result))
                return
            if member:
                _sent(node, _pickled_items(obj) if all_send else _pickled(obj))
            if gather_root:
                if root:
                    _received(node, _pickled_items(result))
            elif all_receive:
                _received(node, _pickled_items(result))
            elif result is not None:
                _received(node, _pickled(result))
        return count
    return build


# method name -> (region name, counter builder or None, name of a status parameter to fill in)
_SEND = ("Send", "Ssend", "Bsend", "Rsend", "Isend", "Issend", "Ibsend", "Irsend")
_CALLS: dict[str, tuple[str, Callable | None, str | None]] = {}
for _name in _SEND:
    _CALLS[_name] = (f"MPI_{_name}", _point_send("buf", "dest"), None)
for _name in ("send", "ssend", "bsend", "isend", "issend", "ibsend"):
    _CALLS[_name] = (f"MPI_{_name.capitalize()}", _point_send("obj", "dest", pickled=True), None)
_CALLS.update({
    "Recv": ("MPI_Recv", _point_receive_status, "status"),
    "recv": ("MPI_Recv", _point_receive_status, "status"),
    "Irecv": ("MPI_Irecv", _point_receive_buffer, None),
    "irecv": ("MPI_Irecv", _point_receive_buffer, None),
    "Sendrecv": ("MPI_Sendrecv", _sendrecv("sendbuf"), "status"),
    "sendrecv": ("MPI_Sendrecv", _sendrecv("sendobj", pickled=True), "status"),
    "Sendrecv_replace": ("MPI_Sendrecv_replace", _sendrecv("buf"), "status"),
    "Isendrecv": ("MPI_Isendrecv", _sendrecv("sendbuf", receive="recvbuf"), None),
    "Isendrecv_replace": ("MPI_Isendrecv_replace", _sendrecv("buf", receive="buf"), None),
    "Bcast": ("MPI_Bcast", _bcast, None),
    "Ibcast": ("MPI_Ibcast", _bcast, None),
    "bcast": ("MPI_Bcast", _bcast_object, None),
    "Reduce": ("MPI_Reduce", _reduce(rooted=True), None),
    "Ireduce": ("MPI_Ireduce", _reduce(rooted=True), None),
    "reduce": ("MPI_Reduce", _reduce_object(rooted=True), None),
    "allreduce": ("MPI_Allreduce", _reduce_object(rooted=False), None),
    "scan": ("MPI_Scan", _reduce_object(rooted=False), None),
    "exscan": ("MPI_Exscan", _reduce_object(rooted=False), None),
    "Gather": ("MPI_Gather", _gather(vector=False, everyone=False), None),
    "Igather": ("MPI_Igather", _gather(vector=False, everyone=False), None),
    "Gatherv": ("MPI_Gatherv", _gather(vector=True, everyone=False), None),
    "Igatherv": ("MPI_Igatherv", _gather(vector=True, everyone=False), None),
    "Allgather": ("MPI_Allgather", _gather(vector=False, everyone=True), None),
    "Iallgather": ("MPI_Iallgather", _gather(vector=False, everyone=True), None),
    "Allgatherv": ("MPI_Allgatherv", _gather(vector=True, everyone=True), None),
    "Iallgatherv": ("MPI_Iallgatherv", _gather(vector=True, everyone=True), None),
    "gather": ("MPI_Gather", _objects("sendobj", gather_root=True), None),
    "allgather": ("MPI_Allgather", _objects("sendobj", all_receive=True), None),
    "Scatter": ("MPI_Scatter", _scatter(vector=False), None),
    "Iscatter": ("MPI_Iscatter", _scatter(vector=False), None),
    "Scatterv": ("MPI_Scatterv", _scatter(vector=True), None),
    "Iscatterv": ("MPI_Iscatterv", _scatter(vector=True), None),
    "scatter": ("MPI_Scatter", _objects("sendobj", scatter_root=True), None),
    "Alltoall": ("MPI_Alltoall", _exchange(vector=False), None),
    "Ialltoall": ("MPI_Ialltoall", _exchange(vector=False), None),
    "Alltoallv": ("MPI_Alltoallv", _exchange(vector=True), None),
    "Ialltoallv": ("MPI_Ialltoallv", _exchange(vector=True), None),
    "Alltoallw": ("MPI_Alltoallw", _exchange(vector=True), None),
    "Ialltoallw": ("MPI_Ialltoallw", _exchange(vector=True), None),
    "alltoall": ("MPI_Alltoall", _objects("sendobj", all_send=True, all_receive=True), None),
    "Reduce_scatter_block": ("MPI_Reduce_scatter_block", _reduce_scatter(block=True), None),
    "Ireduce_scatter_block": ("MPI_Ireduce_scatter_block", _reduce_scatter(block=True), None),
    "Reduce_scatter": ("MPI_Reduce_scatter", _reduce_scatter(block=False), None),
    "Ireduce_scatter": ("MPI_Ireduce_scatter", _reduce_scatter(block=False), None),
    "Barrier": ("MPI_Barrier", None, None),
    "Ibarrier": ("MPI_Ibarrier", None, None),
    "barrier": ("MPI_Barrier", None, None),
})
for _name in ("Probe", "Iprobe"):
    _CALLS[_name] = (f"MPI_{_name}", None, None)
    _CALLS[_name.lower()] = (f"MPI_{_name}", None, None)
for _name in ("Allreduce", "Iallreduce", "Scan", "Iscan"):
    _CALLS[_name] = (f"MPI_{_name}", _reduce(rooted=False), None)
for _name in ("Exscan", "Iexscan"):
    _CALLS[_name] = (f"MPI_{_name}", _reduce(rooted=False, exclusive=True), None)
for _name in ("Neighbor_allgather", "Neighbor_alltoall", "Ineighbor_allgather", "Ineighbor_alltoall"):
    _CALLS[_name] = (f"MPI_{_name}", _exchange(vector=False), None)
for _name in ("Neighbor_alltoallv", "Neighbor_alltoallw", "Ineighbor_alltoallv", "Ineighbor_alltoallw"):
    _CALLS[_name] = (f"MPI_{_name}", _exchange(vector=True, neighbours=True), None)
for _name in ("Neighbor_allgatherv", "Ineighbor_allgatherv"):
    _CALLS[_name] = (f"MPI_{_name}", _exchange(vector=True, neighbours=True, one_block_sent=True), None)
_CALLS["neighbor_allgather"] = ("MPI_Neighbor_allgather", _objects("sendobj", all_receive=True), None)
_CALLS["neighbor_alltoall"] = ("MPI_Neighbor_alltoall", _objects("sendobj", all_send=True, all_receive=True), None)

# Methods returning new communicators or matched messages: timed, and their results wrapped.
_DERIVED = {
    "Mprobe": "MPI_Mprobe", "mprobe": "MPI_Mprobe", "Improbe": "MPI_Improbe", "improbe": "MPI_Improbe",
    "Dup": "MPI_Comm_dup", "Dup_with_info": "MPI_Comm_dup_with_info", "Clone": "MPI_Comm_dup",
    "Idup": "MPI_Comm_idup", "Idup_with_info": "MPI_Comm_idup_with_info",
    "Split": "MPI_Comm_split", "Split_type": "MPI_Comm_split_type", "Create": "MPI_Comm_create",
    "Create_group": "MPI_Comm_create_group", "Create_cart": "MPI_Cart_create",
    "Create_graph": "MPI_Graph_create", "Create_dist_graph": "MPI_Dist_graph_create",
    "Create_dist_graph_adjacent": "MPI_Dist_graph_create_adjacent",
    "Create_intercomm": "MPI_Intercomm_create", "Merge": "MPI_Intercomm_merge", "Sub": "MPI_Cart_sub",
    "Spawn": "MPI_Comm_spawn", "Spawn_multiple": "MPI_Comm_spawn_multiple", "Accept": "MPI_Comm_accept",
    "Connect": "MPI_Comm_connect",
}

# The receives of a matched message (from Mprobe, Improbe ...), as _CALLS.
_MESSAGE_CALLS = {
    "Recv": ("MPI_Mrecv", _point_receive_status, "status"),
    "recv": ("MPI_Mrecv", _point_receive_status, "status"),
    "Irecv": ("MPI_Imrecv", _point_receive_buffer, None),
    "irecv": ("MPI_Imrecv", _point_receive_buffer, None),
}


# ------------------------------------------------------------------- the classes
def _load() -> dict[type, type]:
    """Import mpi4py and build the recording classes (once)."""
    global _classes, _wrapped_types, _MPI, _PROC_NULL, _ROOT, _IN_PLACE, _BYTE
    if _classes is not None:
        return _classes
    from mpi4py import MPI

    _MPI, _PROC_NULL, _ROOT, _IN_PLACE, _BYTE = MPI, MPI.PROC_NULL, MPI.ROOT, MPI.IN_PLACE, MPI.BYTE
    _record_requests(MPI)  # before the methods: they return recording requests
    _record_messages(MPI)
    classes: dict[type, type] = {}
    for base in (MPI.Cartcomm, MPI.Graphcomm, MPI.Distgraphcomm, MPI.Topocomm, MPI.Intracomm, MPI.Intercomm, MPI.Comm):
        namespace: dict[str, Any] = {"__module__": __name__,
                                     "__doc__": f"An {base.__name__} that records its MPI calls."}
        for method, (region, counter, status) in _CALLS.items():
            original = getattr(base, method, None)
            if original is not None:
                namespace[method] = _recorder(original, region, counter, status)
        for method, region in _DERIVED.items():
            original = getattr(base, method, None)
            if original is not None:
                namespace[method] = _deriver(original, region)
        namespace["__repr__"] = lambda self: f"<recording {type(self).__mro__[1].__name__} of size {self.Get_size()}>"
        classes[base] = type(base.__name__, (base,), namespace)
    _classes = classes
    _wrapped_types = tuple(classes.values())
    return classes


def _record_messages(MPI) -> None:
    """Build the class of the matched messages a recording communicator's ``Mprobe`` returns: their receives
    (``MPI_Mrecv``, ``MPI_Imrecv``) are recorded and counted."""
    global _MESSAGE, _RecordingMessage
    if _RecordingMessage is not None:
        return
    _MESSAGE = MPI.Message
    namespace: dict[str, Any] = {"__module__": __name__, "__doc__": "A matched message whose receive is recorded."}
    for method, (region, counter, status) in _MESSAGE_CALLS.items():
        namespace[method] = _recorder(getattr(_MESSAGE, method), region, counter, status)
    _RecordingMessage = type("Message", (_MESSAGE,), namespace)


# A request's completion calls: instance methods, and class methods over a list of requests.
_WAITS = {"Wait": "MPI_Wait", "wait": "MPI_Wait", "Test": "MPI_Test", "test": "MPI_Test"}
_WAITS_ON_CLASS = {f"{kind}{which}": f"MPI_{kind.capitalize()}{which}"
                   for kind in ("Wait", "wait", "Test", "test") for which in ("all", "any", "some")}


def _record_requests(MPI) -> None:
    """Build the recording request class and make it ``MPI.Request``, so ``MPI.Request.Waitall(...)`` is timed."""
    global _REQUEST, _RecordingRequest
    if _RecordingRequest is not None:
        return
    _REQUEST = base = MPI.Request

    class _Same(type):  # isinstance(r, MPI.Request) stays true of every request, ours or not (not of subclasses)
        def __instancecheck__(cls, obj):
            return isinstance(obj, base) if cls is _RecordingRequest else type.__instancecheck__(cls, obj)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, base) if cls is _RecordingRequest else type.__subclasscheck__(cls, sub)

    namespace: dict[str, Any] = {"__module__": __name__, "__doc__": "A request whose completion calls are recorded."}
    for method, region in _WAITS.items():
        if hasattr(base, method):
            namespace[method] = _completion(getattr(base, method), region)
    for method, region in _WAITS_ON_CLASS.items():
        if hasattr(base, method):
            namespace[method] = classmethod(_completion(getattr(base, method), region, on_class=True))
    _RecordingRequest = _Same("Request", (base,), namespace)
    MPI.Request = _RecordingRequest


def _completion(original, region: str, on_class: bool = False) -> Callable:
    """A completion call timed as the child region ``region`` (a class method's first argument, the class, is
    dropped: ``original`` is bound to mpi4py's class already)."""
    timed = _timed(original, region)
    if on_class:
        return functools.wraps(original)(lambda cls, *args, **kwargs: timed(*args, **kwargs))
    return functools.wraps(original)(timed)


def _node(region: str):
    try:
        c = regions._local.cursor
    except AttributeError:
        c = regions.new_cursor()
    parent = c.node
    node = parent.children.get(region)
    if node is None:
        node = parent.add(region)
        node.comm = True
    return c, parent, node


def _recorder(original, region: str, build: Callable | None, status_name: str | None) -> Callable:
    """A method that times ``original`` as the child region ``region`` and counts its traffic."""
    signature = _Signature(original)
    counter = build(signature) if build is not None else None
    status_position = signature.names.index(status_name) if status_name else None
    state, perf, local, new_cursor = regions._state, perf_counter, regions._local, regions.new_cursor
    Status, Request, Recording = _MPI.Status, _REQUEST, _RecordingRequest

    @functools.wraps(original)
    def method(self, *args, **kwargs):
        if state.off:
            return original(self, *args, **kwargs)
        try:
            c = local.cursor
        except AttributeError:
            c = new_cursor()
        status = None
        if status_position is not None:  # ask MPI what arrived, unless the caller does
            if len(args) > status_position:
                status = args[status_position]
            else:
                status = kwargs.get(status_name)
            if status is None:  # this thread's own, reused: read right after the call
                status = c.status
                if status is None:
                    status = c.status = Status()
                if len(args) > status_position:
                    args = args[:status_position] + (status,) + args[status_position + 1:]
                else:
                    kwargs[status_name] = status
        parent = c.node
        node = parent.children.get(region)
        if node is None:
            node = parent.add(region)
            node.comm = True
        c.node = node
        node.start = start = perf()
        try:
            result = original(self, *args, **kwargs) if kwargs else original(self, *args)
        finally:
            # The timing epilogue of regions.region's wrapper, written out again on purpose: a shared
            # function call here costs ~0.1 µs per MPI call, against the 2 µs overhead target.
            elapsed = perf() - start
            node.visits += 1
            node.time += elapsed
            if elapsed < node.tmin:
                node.tmin = elapsed
            if elapsed > node.tmax:
                node.tmax = elapsed
            c.node = parent
        if counter is not None:
            try:
                counter(self, node, args, kwargs, result, status)
            except Exception as error:  # never break the program over a count
                _warn_once(region, error)
        if type(result) is Request:  # a non-blocking call's: its Wait and Test are recorded
            return Recording(result)
        return result

    return method


def _deriver(original, region: str) -> Callable:
    """A method returning a new communicator: timed, and its result wrapped."""
    timed = _timed(original, region)

    @functools.wraps(original)
    def method(self, *args, **kwargs):
        return _wrap_result(timed(self, *args, **kwargs))

    return method


def _timed(original, region: str) -> Callable:
    """``original`` timed as the child region ``region`` of the current one (called as it is while recording is
    off); no counts (those are :func:`_recorder`'s)."""
    state = regions._state

    def timed(*args, **kwargs):
        if state.off:
            return original(*args, **kwargs)
        c, parent, node = _node(region)
        c.node = node
        node.start = start = perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            node.close(perf_counter() - start)
            c.node = parent

    return timed


def _wrap_result(result):
    if isinstance(result, tuple):  # Idup: (communicator, request)
        return tuple(_wrap_result(part) for part in result)
    if type(result) is _REQUEST:
        return _RecordingRequest(result)
    if type(result) is _MESSAGE and result != _MPI.MESSAGE_NO_PROC:  # (from MPI.PROC_NULL: no message)
        return _RecordingMessage(result)
    if isinstance(result, _MPI.Comm) and not isinstance(result, _wrapped_types) and result != _MPI.COMM_NULL:
        for base in type(result).__mro__:
            if base in _classes:
                return _classes[base](result)
    return result


def _warn_once(region: str, error: Exception) -> None:
    if region in _warned:
        return
    _warned.add(region)
    warnings.warn(
        f"extrap-plugins instrument: cannot count the messages of {region} ({type(error).__name__}: {error}); "
        f"its time is recorded, its message and byte counts may be incomplete",
        RuntimeWarning,
        stacklevel=3,
    )
