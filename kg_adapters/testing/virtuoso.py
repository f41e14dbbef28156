"""Run a real, throwaway Virtuoso 7 on loopback for tests and benchmarks.

``VirtuosoServer`` writes its own ``virtuoso.ini`` into a work directory (database, log, free loopback ports
chosen at run time, small buffers, the ``[SPARQL]`` limits under test), starts ``virtuoso-t +foreground`` as a
child process, waits for the HTTP SPARQL endpoint with a bounded deadline, bulk-loads N-Triples with the
Virtuoso bulk loader (``ld_add`` + ``rdf_loader_run()`` + ``checkpoint`` through ``isql-vt``) and always stops
the process again: ``stop()`` from ``__exit__`` / a fixture finaliser, an ``atexit`` hook for anything still
running when the interpreter exits, and ``PR_SET_PDEATHSIG`` so the kernel kills the server even if the Python
process itself is killed.

Facts about Virtuoso 7.2.5 (Debian ``virtuoso-opensource-7-bin``) this module relies on -- observed, not assumed:

* A fresh database is not empty: the system graphs (``virtrdf#``, ``ldp#``, the service description) hold
  ~2,500 triples, and a query without ``FROM`` / ``default-graph-uri`` runs over the union of *all* graphs.
  ``[SPARQL] DefaultGraph`` does not change that (in 7.2 it only pre-fills the HTML form); a row in
  ``DB.DBA.SYS_SPARQL_HOST`` does, so ``start()`` adds one pointing at ``default_graph`` (the load graph).
* ``ResultSetMaxRows`` truncates silently with HTTP 200 and an ``X-SPARQL-MaxRows: <n>`` header.
* ``ORDER BY`` with ``OFFSET + LIMIT`` above ``[Parameters] MaxSortedTopRows`` fails with HTTP 500 and
  ``Virtuoso 22023 Error SR353: Sorted TOP clause specifies more then ... rows to sort``.
* The SPARQL (anonymous) user may only read; updates over ``/sparql`` are refused.
* GET request lines longer than ~10,000 bytes are silently truncated; send long queries with POST.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kg_adapters.testing.lifecycle import ServerLifecycle

DEFAULT_GRAPH = "http://kg-adapters.test/graph"
"""The graph ``load`` writes to and the endpoint's default graph (for queries without FROM), unless told otherwise."""

VIRTUOSO_ENV = "KGA_VIRTUOSO_T"
"""Environment variable naming a ``virtuoso-t`` binary to use instead of the one on ``PATH``."""
ISQL_ENV = "KGA_VIRTUOSO_ISQL"
"""Environment variable naming an ``isql-vt`` (Virtuoso's isql, not unixODBC's) instead of the one on ``PATH``."""

DBA_USER = "dba"
DBA_PASSWORD = "dba"  # the stock password of a new database; the server listens on 127.0.0.1 only

LOADABLE_SUFFIXES = (".nt", ".nt.gz", ".ttl", ".ttl.gz")

_POLL_INTERVAL = 0.1  # seconds between readiness probes
_STOP_GRACE = 30.0  # seconds to wait after SIGTERM before SIGKILL
_PORT_ATTEMPTS = 3  # start attempts when a chosen port was taken between choosing and binding it


class VirtuosoError(RuntimeError):
    """Virtuoso failed to start, load, answer or stop."""


class VirtuosoUnavailable(VirtuosoError):
    """``virtuoso-t`` or ``isql-vt`` is not installed (see ``scripts/ensure-virtuoso.sh``)."""


def virtuoso_binary() -> str | None:
    """Path of the ``virtuoso-t`` to run (``$KGA_VIRTUOSO_T`` or ``PATH``), or ``None``."""
    return os.environ.get(VIRTUOSO_ENV) or shutil.which("virtuoso-t")


def isql_binary() -> str | None:
    """Path of Virtuoso's ``isql-vt`` (``$KGA_VIRTUOSO_ISQL`` or ``PATH``), or ``None``."""
    return os.environ.get(ISQL_ENV) or shutil.which("isql-vt")


def virtuoso_version() -> str | None:
    """The ``Version ...`` line of ``virtuoso-t --version`` (printed on stderr, exit status 1), or ``None``."""
    binary = virtuoso_binary()
    if binary is None:
        return None
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30, check=False)
    for line in (out.stdout + out.stderr).splitlines():
        if line.startswith("Version"):
            return line.strip()
    return None


def in_ci() -> bool:
    """Whether this runs in CI (``$CI`` set and not ``0``/``false``/``no``/``off``): there a missing
    prerequisite fails the test instead of skipping it."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")


def _free_ports(count: int) -> list[int]:
    """``count`` distinct free TCP ports on 127.0.0.1 (all sockets held open together so they differ)."""
    with contextlib.ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
        return ports


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask Linux to SIGKILL the server when the process (thread) that started it dies."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _is_within(path: Path, directory: Path) -> bool:
    try:
        path.relative_to(directory)
    except ValueError:
        return False
    return True


_LIVE: set[VirtuosoServer] = set()
_LIVE_LOCK = threading.Lock()


@atexit.register
def _stop_all() -> None:
    with _LIVE_LOCK:
        servers = list(_LIVE)
    for server in servers:
        with contextlib.suppress(Exception):
            server.stop()


class VirtuosoServer(ServerLifecycle):
    """A throwaway Virtuoso on free loopback ports, configured by a ``virtuoso.ini`` it writes into ``workdir``.

    Use it as a context manager (``with VirtuosoServer(tmp) as v: v.load([...]); requests.get(v.sparql_url, ...)``)
    or call ``start()`` / ``stop()``. ``isql_port``, ``http_port`` and ``sparql_url`` are set by ``start()``.

    ``data_dirs`` are added to ``DirsAllowed`` so ``load`` reads files there in place; files elsewhere are
    symlinked into ``workdir/staging`` first. ``default_graph`` is what queries without ``FROM`` or
    ``default-graph-uri`` see (``SYS_SPARQL_HOST``, and ``[SPARQL] DefaultGraph`` for the HTML form); ``None``
    keeps Virtuoso's union of all graphs, system graphs included. ``number_of_buffers`` are 8 KiB pages
    (100,000 ~ 0.8 GiB, ample for a few million triples); ``extra_ini`` overrides or adds any other settings,
    e.g. ``{"SPARQL": {"MaxQueryCostEstimationTime": 400}}``.
    """

    def __init__(
        self,
        workdir: Path,
        *,
        result_set_max_rows: int = 10000,
        max_query_execution_time: int = 60,
        max_sorted_top_rows: int = 10000,
        default_graph: str | None = DEFAULT_GRAPH,
        data_dirs: Iterable[Path] = (),
        number_of_buffers: int = 100_000,
        startup_timeout: float = 120.0,
        extra_ini: Mapping[str, Mapping[str, str | int]] | None = None,
    ) -> None:
        self.workdir = Path(workdir).resolve()
        self.result_set_max_rows = result_set_max_rows
        self.max_query_execution_time = max_query_execution_time
        self.max_sorted_top_rows = max_sorted_top_rows
        self.default_graph = default_graph
        self.data_dirs = [Path(d).resolve() for d in data_dirs]
        self.number_of_buffers = number_of_buffers
        self.startup_timeout = startup_timeout
        self.extra_ini = {section: dict(values) for section, values in (extra_ini or {}).items()}
        self.db_dir = self.workdir / "db"
        self.staging_dir = self.workdir / "staging"
        self.ini_path = self.workdir / "virtuoso.ini"
        self.log_path = self.db_dir / "virtuoso.log"
        self.console_path = self.workdir / "virtuoso.console"
        self.isql_port = 0
        self.http_port = 0
        self.startup_seconds: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._stage_counter = 0

    # ------------------------------------------------------------------ configuration

    @property
    def sparql_url(self) -> str:
        """``http://127.0.0.1:<http_port>/sparql``; only meaningful after ``start()``."""
        if not self.http_port:
            raise VirtuosoError("VirtuosoServer.sparql_url is only known after start()")
        return f"http://127.0.0.1:{self.http_port}/sparql"

    @property
    def dirs_allowed(self) -> list[Path]:
        return [self.workdir, *self.data_dirs]

    def ini_settings(self) -> dict[str, dict[str, str | int]]:
        """The ``virtuoso.ini`` content as sections of settings (``extra_ini`` applied last)."""
        db = self.db_dir
        buffers = self.number_of_buffers
        settings: dict[str, dict[str, str | int]] = {
            "Database": {
                "DatabaseFile": str(db / "virtuoso.db"),
                "ErrorLogFile": str(self.log_path),
                "LockFile": str(db / "virtuoso.lck"),
                "TransactionFile": str(db / "virtuoso.trx"),
                "xa_persistent_file": str(db / "virtuoso.pxa"),
                "ErrorLogLevel": 7,
                "FileExtend": 200,
                "MaxCheckpointRemap": 2000,
                "Striping": 0,
                "TempStorage": "TempDatabase",
            },
            "TempDatabase": {
                "DatabaseFile": str(db / "virtuoso-temp.db"),
                "TransactionFile": str(db / "virtuoso-temp.trx"),
                "MaxCheckpointRemap": 2000,
                "Striping": 0,
            },
            "Parameters": {
                "ServerPort": f"127.0.0.1:{self.isql_port}",
                "DisableUnixSocket": 1,
                "DisableTcpSocket": 0,
                "MaxClientConnections": 16,
                "CheckpointInterval": 0,  # throwaway database: only the explicit checkpoint after a load
                "O_DIRECT": 0,
                "CaseMode": 2,
                "MaxStaticCursorRows": 5000,
                "DirsAllowed": ", ".join(str(d) for d in self.dirs_allowed),
                "NumberOfBuffers": buffers,
                "MaxDirtyBuffers": buffers * 3 // 4,
                "MaxQueryMem": "1G",
                "ThreadsPerQuery": max(1, min(4, os.cpu_count() or 1)),
                "AsyncQueueMaxThreads": 4,
                "VectorSize": 1000,
                "MaxVectorSize": 1000000,
                "MaxSortedTopRows": self.max_sorted_top_rows,
            },
            "HTTPServer": {
                "ServerPort": f"127.0.0.1:{self.http_port}",
                "ServerRoot": str(self.workdir / "www"),
                "ServerThreads": 8,
                "MaxClientConnections": 8,
                "MaxKeepAlives": 8,
                "KeepAliveTimeout": 10,
                "EnabledDavVSP": 0,
                "HTTPProxyEnabled": 0,
                "Charset": "UTF-8",
                "EnabledGzipContent": 0,
            },
            "Client": {"SQL_PREFETCH_ROWS": 100, "SQL_PREFETCH_BYTES": 16000, "SQL_QUERY_TIMEOUT": 0},
            "SPARQL": {
                "ResultSetMaxRows": self.result_set_max_rows,
                "MaxQueryExecutionTime": self.max_query_execution_time,
                "MaxConstructTriples": self.result_set_max_rows,
                "DeferInferenceRulesInit": 0,
            },
        }
        if self.default_graph is not None:
            settings["SPARQL"]["DefaultGraph"] = self.default_graph
        for section, values in self.extra_ini.items():
            settings.setdefault(section, {}).update(values)
        return settings

    def write_ini(self) -> Path:
        lines = []
        for section, values in self.ini_settings().items():
            lines.append(f"[{section}]")
            lines.extend(f"{key} = {value}" for key, value in values.items())
            lines.append("")
        self.ini_path.write_text("\n".join(lines), encoding="utf-8")
        return self.ini_path

    # ------------------------------------------------------------------ lifecycle

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> VirtuosoServer:
        """Write the ini, start ``virtuoso-t`` and return once the SPARQL endpoint answers (bounded wait)."""
        if self._proc is not None:
            raise VirtuosoError("this VirtuosoServer was already started")
        binary, isql = virtuoso_binary(), isql_binary()
        if binary is None or isql is None:
            raise VirtuosoUnavailable(
                "virtuoso-t / isql-vt not found on PATH (install Debian's virtuoso-opensource-7-bin, e.g. with "
                "scripts/ensure-virtuoso.sh, or set KGA_VIRTUOSO_T / KGA_VIRTUOSO_ISQL)"
            )
        began = time.monotonic()
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            shutil.rmtree(self.db_dir, ignore_errors=True)
            for directory in (self.db_dir, self.staging_dir, self.workdir / "www"):
                directory.mkdir(parents=True, exist_ok=True)
            self.isql_port, self.http_port = _free_ports(2)
            self.write_ini()
            self._spawn(binary)
            try:
                self._wait_ready()
            except _PortTaken as taken:
                self._reap()
                if attempt == _PORT_ATTEMPTS:
                    raise VirtuosoError(f"Virtuoso could not bind its ports in {attempt} attempts:\n{taken}") from taken
                continue
            except BaseException:
                self.stop()
                raise
            break
        try:
            if self.default_graph is not None:
                self._set_endpoint_default_graph(self.default_graph)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began
        return self

    def _set_endpoint_default_graph(self, graph: str) -> None:
        """Make ``/sparql`` queries without ``default-graph-uri`` use ``graph`` as their default graph.

        ``[SPARQL] DefaultGraph`` in virtuoso.ini only pre-fills the HTML query form in 7.2; what the endpoint
        applies is the per-Host table ``DB.DBA.SYS_SPARQL_HOST`` (``SH_HOST`` is a LIKE pattern). Responses
        then carry ``X-SPARQL-default-graph: <graph>``. Note Virtuoso *adds* a query's ``FROM`` graphs to it.
        """
        self.isql(
            "delete from DB.DBA.SYS_SPARQL_HOST where SH_HOST = '%';\n"
            f"insert into DB.DBA.SYS_SPARQL_HOST (SH_HOST, SH_GRAPH_URI) values ('%', {_sql_str(graph)});"
        )

    def _spawn(self, binary: str) -> None:
        with open(self.console_path, "wb") as console:
            self._proc = subprocess.Popen(
                [binary, "+foreground", "+configfile", str(self.ini_path)],
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # our stop() decides when it ends, not a terminal's Ctrl-C
                preexec_fn=_die_with_parent,
            )
        with _LIVE_LOCK:
            _LIVE.add(self)

    def _wait_ready(self) -> None:
        """Poll the HTTP endpoint (and the SQL port) until both answer, the process dies or the deadline passes."""
        assert self._proc is not None
        deadline = time.monotonic() + self.startup_timeout
        query = {"query": "ASK {}", "format": "application/sparql-results+json"}
        probe = self.sparql_url + "?" + urllib.parse.urlencode(query)
        while True:
            if self._proc.poll() is not None:
                log = self.log_tail()
                if "failed" in log.lower() and "listen" in log.lower():
                    raise _PortTaken(log)
                raise VirtuosoError(f"virtuoso-t exited with status {self._proc.returncode} during start-up:\n{log}")
            if self._http_ready(probe) and self._tcp_ready(self.isql_port):
                return
            if time.monotonic() > deadline:
                raise VirtuosoError(
                    f"Virtuoso not ready within {self.startup_timeout:.0f}s on {self.sparql_url}:\n{self.log_tail()}"
                )
            time.sleep(_POLL_INTERVAL)

    @staticmethod
    def _http_ready(url: str) -> bool:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return bool(response.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    @staticmethod
    def _tcp_ready(port: int) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        """SIGTERM (Virtuoso's quick shutdown, ~1-2 s), wait, SIGKILL if needed. Idempotent, never raises for
        a process that is already gone."""
        proc = self._proc
        if proc is None:
            return
        try:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=_STOP_GRACE)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
                    proc.wait(timeout=30)
        finally:
            self._reap()

    def _reap(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=30)
        self._proc = None
        with _LIVE_LOCK:
            _LIVE.discard(self)

    def log_tail(self, lines: int = 40) -> str:
        """The end of the Virtuoso log (and console output), for error messages."""
        parts = []
        for path in (self.log_path, self.console_path):
            with contextlib.suppress(OSError):
                text = path.read_text(encoding="utf-8", errors="replace").splitlines()
                parts.append(f"--- {path.name}\n" + "\n".join(text[-lines:]))
        return "\n".join(parts)

    # ------------------------------------------------------------------ SQL and loading

    def isql(self, sql: str, *, timeout: float = 3600.0) -> str:
        """Run SQL statements (one per line, each ending in ``;``) as ``dba`` through ``isql-vt``; return the
        output. ``isql-vt`` exits 0 even when a statement fails, so ``*** Error`` in the output raises."""
        isql = isql_binary()
        if isql is None:
            raise VirtuosoUnavailable("isql-vt not found on PATH")
        if not self.running:
            raise VirtuosoError("Virtuoso is not running")
        result = subprocess.run(
            [
                isql,
                f"127.0.0.1:{self.isql_port}",
                DBA_USER,
                DBA_PASSWORD,
                "ERRORS=STDOUT",
                "VERBOSE=OFF",
                "BANNER=OFF",
                "PROMPT=OFF",
                "ECHO=OFF",
            ],
            input=sql if sql.endswith("\n") else sql + "\n",
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        output = result.stdout + result.stderr
        if result.returncode != 0 or "*** Error" in output:
            raise VirtuosoError(f"isql-vt failed (exit {result.returncode}):\n{output.strip()}")
        return output

    def _stage(self, path: Path) -> Path:
        """``path`` if Virtuoso may read it (a ``DirsAllowed`` directory), else a symlink to it in staging."""
        if any(_is_within(path, allowed) for allowed in self.dirs_allowed):
            return path
        self._stage_counter += 1
        link = self.staging_dir / f"{self._stage_counter:04d}-{path.name}"
        link.symlink_to(path)
        return link

    def load(self, files: Sequence[Path], graph: str = DEFAULT_GRAPH) -> int:
        """Bulk-load N-Triples (``.nt``, ``.nt.gz``; Turtle works too) into ``graph``; return its triple count.

        Runs ``ld_add`` per file, ``rdf_loader_run()`` and ``checkpoint`` through isql, then raises
        ``VirtuosoError`` if the loader recorded an error for any file (e.g. a syntax error).
        """
        if not files:
            raise ValueError("load() needs at least one file")
        staged: list[Path] = []
        for file in dict.fromkeys(Path(f) for f in files):
            path = Path(file).resolve()
            if not path.is_file():
                raise FileNotFoundError(path)
            if not path.name.endswith(LOADABLE_SUFFIXES):
                raise ValueError(f"{path.name}: Virtuoso's bulk loader picks the format by suffix {LOADABLE_SUFFIXES}")
            staged.append(self._stage(path))
        script = []
        for path in staged:
            script.append(f"delete from DB.DBA.LOAD_LIST where ll_file = {_sql_str(str(path))};")
            script.append(f"ld_add({_sql_str(str(path))}, {_sql_str(graph)});")
        script.append("rdf_loader_run();")
        script.append("checkpoint;")
        names = ", ".join(_sql_str(str(p)) for p in staged)
        script.append(
            "select concat('KGA-LOAD|', ll_file, '|', cast(ll_state as varchar), '|', coalesce(ll_error, ''))"
            f" from DB.DBA.LOAD_LIST where ll_file in ({names});"
        )
        output = self.isql("\n".join(script))
        failures = [
            line
            for line in output.splitlines()
            if line.startswith("KGA-LOAD|") and (line.split("|")[2] != "2" or line.split("|", 3)[3].strip())
        ]
        reported = sum(line.startswith("KGA-LOAD|") for line in output.splitlines())
        if failures or reported != len(staged):
            raise VirtuosoError("bulk load failed:\n" + ("\n".join(failures) or output))
        return self.triple_count(graph)

    # ------------------------------------------------------------------ SPARQL

    def select(self, query: str, *, timeout: float = 300.0) -> dict[str, Any]:
        """POST a SELECT/ASK to ``sparql_url`` and return the parsed ``application/sparql-results+json``."""
        body = urllib.parse.urlencode({"query": query, "format": "application/sparql-results+json"}).encode()
        request = urllib.request.Request(self.sparql_url, data=body, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                result: dict[str, Any] = json.load(response)
                return result
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", "replace")
            raise VirtuosoError(f"SPARQL {error.code}: {detail}") from error

    def triple_count(self, graph: str = DEFAULT_GRAPH) -> int:
        result = self.select(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}")
        return int(result["results"]["bindings"][0]["n"]["value"])


class _PortTaken(VirtuosoError):
    """A chosen port was taken before Virtuoso could bind it; start() retries with new ports."""


def require_virtuoso() -> None:
    """Skip the calling test when Virtuoso is not installed -- or fail it when ``$CI`` is set (and not
    ``0``/``false``/``no``/``off``), because CI must run the Virtuoso tests, not silently skip them."""
    import pytest

    if virtuoso_binary() is None or isql_binary() is None:
        message = (
            "Virtuoso (virtuoso-t and isql-vt) is not installed; run scripts/ensure-virtuoso.sh "
            "(installs Debian's virtuoso-opensource-7-bin)"
        )
        if in_ci():
            pytest.fail(f"{message} -- required under CI={os.environ.get('CI')}", pytrace=False)
        pytest.skip(message)


def virtuoso_fixture(
    tmp_path_factory: Any,
    files: Sequence[Path],
    *,
    request: Any = None,
    graph: str = DEFAULT_GRAPH,
    **settings: Any,
) -> VirtuosoServer:
    """A started server with ``files`` loaded into ``graph``, for a (session-scoped) pytest fixture::

        @pytest.fixture(scope="session")
        def virtuoso(tmp_path_factory, request):
            return virtuoso_fixture(tmp_path_factory, [DATA / "x.nt.gz"], request=request)

    ``settings`` go to ``VirtuosoServer`` (``result_set_max_rows=...``); the files' directories are added to
    ``DirsAllowed``. With ``request`` the server stops when the fixture's scope ends, otherwise at interpreter
    exit (atexit). Skips when Virtuoso is not installed -- unless ``$CI`` is set (and not ``0``/``false``),
    where a missing Virtuoso fails the test instead.
    """
    require_virtuoso()
    paths = [Path(f).resolve() for f in files]
    data_dirs = list(dict.fromkeys([*settings.pop("data_dirs", ()), *(p.parent for p in paths)]))
    server = VirtuosoServer(tmp_path_factory.mktemp("virtuoso"), data_dirs=data_dirs, **settings)
    server.start()
    try:
        if paths:
            server.load(paths, graph=graph)
    except BaseException:
        server.stop()
        raise
    if request is not None:
        request.addfinalizer(server.stop)
    return server
