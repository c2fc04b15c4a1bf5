#!/usr/bin/env python3
"""refsim: independent reference implementation of FCFS / EASY / conservative
backfilling, written from docs/scheduling-semantics.md alone (no schedlab code was
read).  Standard library only (Python >= 3.11).

    python3 tools/refsim/refsim.py TRACE [--format swf|batsim] [--procs N]
        [--policy SPEC] [--walltime-kill] --out jobs.csv

SPEC: fcfs | easy | conservative, optionally with options in brackets, e.g.
    easy[pass=per-event,backfill_estimate=actual,reservation=nodes]
    conservative[replan=rebuild]
Options: pass=per-time|per-event, backfill_estimate=requested|actual,
         reservation=count|nodes, replan=revisit|rebuild (conservative only).

Every time is an integer number of microseconds internally.  Section names in the
comments ("Workload", "Events and passes", ...) refer to the contract.
"""

import argparse
import bisect
import csv
import decimal
import gzip
import heapq
import json
import re
import sys
import time
from decimal import Decimal, ROUND_HALF_UP

decimal.getcontext().prec = 80          # exact for any realistic input
INF = float("inf")
_ONE = Decimal(1)


# --------------------------------------------------------------------------- input

def to_us(x):
    """Seconds (Decimal, exact text value) -> integer µs, rounding half up at the
    6th decimal (contract: "Workload")."""
    return int(x.scaleb(6).quantize(_ONE, rounding=ROUND_HALF_UP))


class Job:
    __slots__ = ("idx", "id", "submit", "p", "r", "q", "failed_status", "reject",
                 "e", "killed", "start", "end", "seq", "units", "s", "res_units")

    def __init__(self, idx, jid, submit, p, r, q, failed_status):
        self.idx = idx                    # input position
        self.id = jid                     # id as written
        self.submit = submit              # µs
        self.p = p                        # processors / units
        self.r = r                        # actual run time µs, None = missing
        self.q = q                        # requested time µs, None = undefined
        self.failed_status = failed_status
        self.reject = None                # rejection reason or None
        self.e = None                     # effective run time
        self.killed = False
        self.start = None
        self.end = None
        self.seq = None                   # position in the global start sequence
        self.units = None                 # nodes mode: units held while running
        self.s = None                     # conservative: reservation start
        self.res_units = None             # conservative nodes: reserved units


def _open_text(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, "rt", encoding="utf-8", errors="replace")


_HDR = re.compile(r"^;\s*(MaxProcs|MaxNodes)\s*:(.*)$")
_INT = re.compile(r"[-+]?\d+")


def read_swf(path):
    """Returns (jobs, P from header or None)."""
    jobs = []
    hdr = {}
    with _open_text(path) as f:
        for line in f:
            s = line.strip()
            if not s:
                continue
            if s.startswith(";"):
                m = _HDR.match(s)
                if m and m.group(1) not in hdr:
                    n = _INT.search(m.group(2))     # first integer after the colon
                    if n and int(n.group()) > 0:
                        hdr[m.group(1)] = int(n.group())
                continue
            tok = s.split()
            if len(tok) < 18:
                tok = tok + ["-1"] * (18 - len(tok))
            f_ = [None] * 18                  # only the fields the contract uses
            for k in (1, 3, 4, 7, 8, 10):
                f_[k] = Decimal(tok[k])
            jid = tok[0]
            submit = to_us(f_[1])
            p = int(f_[7]) if f_[7] > 0 else int(f_[4])            # field 8 else 5
            r = None if f_[3] < 0 else to_us(f_[3])                # field 4, -1 missing
            req = to_us(f_[8]) if f_[8] > 0 else 0                  # field 9
            q = req if req > 0 else r                               # may be None / 0
            failed = (f_[10] == 0)                                  # field 11
            jobs.append(Job(len(jobs), jid, submit, p, r, q, failed))
    P = hdr.get("MaxProcs") or hdr.get("MaxNodes")
    return jobs, P


class _Num(Decimal):
    """A JSON number: its exact Decimal value plus the text as written."""


def _num(text):
    d = _Num(text)
    d.text = text
    return d


def read_batsim(path):
    with _open_text(path) as f:
        d = json.load(f, parse_float=_num, parse_int=_num)
    P = int(d["nb_res"])
    profiles = d.get("profiles", {})
    jobs = []
    for j in d["jobs"]:
        jid = j["id"]
        jid = jid.text if isinstance(jid, _Num) else str(jid)   # as written
        submit = to_us(Decimal(j["subtime"]))
        p = int(j["res"])
        prof = profiles.get(j.get("profile"))
        r = None
        if isinstance(prof, dict) and prof.get("type") == "delay" \
                and prof.get("delay") is not None:
            r = to_us(Decimal(prof["delay"]))
            if r < 0:
                r = None
        wt = j.get("walltime")
        q = None
        if isinstance(wt, Decimal) and wt > 0:
            q = to_us(wt)
            if q <= 0:
                q = None
        if q is None:
            q = r
        jobs.append(Job(len(jobs), jid, submit, p, r, q, False))
    return jobs, P


# ------------------------------------------------------------------------- policy

def parse_policy(spec):
    m = re.fullmatch(r"\s*([a-z_]+)\s*(?:\[(.*)\])?\s*", spec)
    if not m:
        raise SystemExit(f"bad policy spec {spec!r}")
    name = m.group(1)
    if name not in ("fcfs", "easy", "conservative"):
        raise SystemExit(f"unknown policy {name!r}")
    opts = {"pass": "per-time", "backfill_estimate": "requested",
            "reservation": "count", "replan": "revisit"}
    allowed = {"pass": ("per-time", "per-event"),
               "backfill_estimate": ("requested", "actual"),
               "reservation": ("count", "nodes"),
               "replan": ("revisit", "rebuild")}
    if m.group(2) and m.group(2).strip():
        for kv in m.group(2).split(","):
            if "=" not in kv:
                raise SystemExit(f"bad option {kv!r}")
            k, v = (x.strip() for x in kv.split("=", 1))
            if k not in allowed or v not in allowed[k]:
                raise SystemExit(f"bad option {k}={v}")
            if k == "replan" and name != "conservative":
                raise SystemExit("replan= is for conservative only")
            opts[k] = v
    return name, opts


# ---------------------------------------------------------------- count profile

class CountProfile:
    """Free units as a step function of t >= now (contract: "Conservative").
    times[i] .. times[i+1] has free[i] units; the last step lasts forever.
    Breakpoints are only ever added (redundant ones are harmless)."""

    def __init__(self, now, P, busy):
        # busy: iterable of (a, b, p): p units occupied on [a, b)
        delta = {}
        f0 = P
        for a, b, p in busy:
            if b <= now:
                continue
            if a <= now:
                f0 -= p
            else:
                delta[a] = delta.get(a, 0) - p
            delta[b] = delta.get(b, 0) + p
        self.times = [now]
        self.free = [f0]
        cur = f0
        for t in sorted(delta):
            cur += delta[t]
            self.times.append(t)
            self.free.append(cur)
        self.now = now

    def _split(self, t):
        i = bisect.bisect_left(self.times, t)
        if i == len(self.times) or self.times[i] != t:
            self.times.insert(i, t)
            self.free.insert(i, self.free[i - 1])
        return i

    def add(self, a, b, dp):
        """free += dp on [a, b) (clipped to t >= now)."""
        a = max(a, self.now)
        if b <= a:
            return
        ia = self._split(a)
        ib = self._split(b)
        self.free[ia:ib] = [x + dp for x in self.free[ia:ib]]

    def earliest_fit(self, p, d):
        """Smallest t >= now with free >= p on all of [t, t + d).  A run of steps
        with free >= p starts either at now or where free rises, i.e. at an end of
        a running job or reservation: so this is exactly the smallest candidate of
        the contract (proof: the feasible set is closed, [now, inf) minus open
        intervals (a - d, b) whose right ends b are such rises).  The last step
        (everything released) has free == P >= p, so the search terminates."""
        times, fr = self.times, self.free
        n = len(times)
        i = 0
        while True:
            while fr[i] < p:            # first step with enough free units
                i += 1
            start = times[i]
            end = start + d
            i += 1
            while i < n and times[i] < end:
                if fr[i] < p:           # window broken: search again from here
                    break
                i += 1
            else:
                return start


# ------------------------------------------------------------------ simulator

class Sim:
    def __init__(self, jobs, P, policy, opts, walltime_kill, paranoid=False,
                 wakeup="idle"):
        self.jobs = jobs
        self.P = P
        self.policy = policy
        self.per_event = opts["pass"] == "per-event"
        self.est_actual = opts["backfill_estimate"] == "actual"
        self.nodes = opts["reservation"] == "nodes"
        self.rebuild = opts["replan"] == "rebuild"
        self.walltime_kill = walltime_kill
        self.paranoid = paranoid
        self.now = None
        self.queue = []                 # waiting jobs, arrival order
        self.running = {}               # seq -> job
        self.free = P                   # count of free units (may go < 0, see README)
        self.next_seq = 0
        self.heap = []                  # (end, seq, job)
        self.ended_since_pass = False
        self.running_by_E = []          # EASY count: sorted (start+q, seq, p)
        self.overcommits = 0            # starts with p > free (literal contract)
        self.wakeup = wakeup            # never | idle (conservative only)
        self.wakeups = 0                # passes run at a reservation start, no event
        self.stale_passes = 0           # passes that found a reservation start < now
        if self.nodes:
            self.unit_jobs = [[] for _ in range(P)]   # running jobs holding unit
            self.n_idle = P
        if policy == "fcfs":
            self.do_pass = self.pass_fcfs
        elif policy == "easy":
            self.do_pass = self.pass_easy_nodes if self.nodes else self.pass_easy_count
        else:
            self.do_pass = self.pass_cons

    # -- helpers ---------------------------------------------------------------
    def est(self, j):
        return j.e if self.est_actual else j.q

    def clamp(self, E):
        """EASY with reservation=nodes: an expected end <= now becomes now + 1 µs."""
        return E if E > self.now else self.now + 1

    def clamp_cons(self, E):
        """Conservative: an expected end < now becomes now + 1 µs; one exactly at now
        releases at now (revised contract, 'Estimates')."""
        return E if E >= self.now else self.now + 1

    def _plan_is_stale(self):
        """Contract 'Conservative' step 1 (revised): a reservation start < now, or the
        running jobs plus all reservations over-book some unit / instant."""
        now = self.now
        held = [j for j in self.queue if j.s is not None]
        if any(j.s < now for j in held):
            return True
        if self.nodes:
            for j in held:
                for u in j.res_units:
                    if any(self.clamp_cons(r.start + self.est(r)) > j.s for r in self.unit_jobs[u]):
                        return True
            return False
        ev = []
        for r in self.running.values():
            ev.append((now, 1, r.p))
            ev.append((self.clamp_cons(r.start + self.est(r)), 0, -r.p))
        for j in held:
            ev.append((j.s, 1, j.p))
            ev.append((j.s + self.est(j), 0, -j.p))
        used = 0
        for _, _, d in sorted(ev):
            used += d
            if used > self.P:
                return True
        return False

    def idle_units(self):
        return [u for u in range(self.P) if not self.unit_jobs[u]]

    def start_job(self, j, units=None):
        if (j.p > self.free if units is None
                else any(self.unit_jobs[u] for u in units)):
            self.overcommits += 1
        j.start = self.now
        j.end = self.now + j.e
        j.seq = self.next_seq
        self.next_seq += 1
        self.free -= j.p
        self.running[j.seq] = j
        heapq.heappush(self.heap, (j.end, j.seq, j))
        if self.policy == "easy" and not self.nodes:
            bisect.insort(self.running_by_E, (j.start + j.q, j.seq, j.p))
        if self.nodes:
            assert units is not None and len(units) == j.p
            j.units = list(units)
            for u in units:
                if not self.unit_jobs[u]:
                    self.n_idle -= 1
                self.unit_jobs[u].append(j)

    def end_job(self, j):
        self.free += j.p
        del self.running[j.seq]
        if self.policy == "easy" and not self.nodes:
            key = (j.start + j.q, j.seq, j.p)
            k = bisect.bisect_left(self.running_by_E, key)
            assert self.running_by_E[k] == key
            del self.running_by_E[k]
        if self.nodes:
            for u in j.units:
                self.unit_jobs[u].remove(j)
                if not self.unit_jobs[u]:
                    self.n_idle += 1
        self.ended_since_pass = True

    def arrive(self, j):
        if j.reject is None:
            self.queue.append(j)

    # -- event loop ("Events and passes") -------------------------------------
    def run(self):
        arr = sorted((j for j in self.jobs), key=lambda j: (j.submit, j.idx))
        for j in self.jobs:
            if j.p <= 0:
                j.reject = "no processors"
            elif j.r is None:
                j.reject = "missing runtime"
            elif j.r == 0:
                j.reject = "zero runtime"
            elif j.p > self.P:
                j.reject = "larger than the machine"
            else:
                if self.walltime_kill and j.r > j.q:
                    j.e, j.killed = j.q, True
                else:
                    j.e = j.r
        n = len(arr)
        ai = 0
        heap = self.heap
        while True:
            t_end = heap[0][0] if heap else INF
            t_arr = arr[ai].submit if ai < n else INF
            t_wake = INF
            if (self.policy == "conservative" and self.queue and self.wakeup == "idle"
                    and t_end == INF and t_arr == INF):
                t_wake = min((j.s for j in self.queue if j.s is not None
                              and j.s > self.now), default=INF)
            if min(t_end, t_arr, t_wake) == INF:
                break
            if t_wake < t_end and t_wake < t_arr:
                # not in the contract (see README): a pass with no event, at the
                # earliest reservation start
                self.now = t_wake
                self.wakeups += 1
                self.do_pass()
                self.ended_since_pass = False
            elif self.per_event:
                if t_end <= t_arr:                 # ENDs first at equal times
                    self.now = t_end
                    self.end_job(heapq.heappop(heap)[2])
                else:
                    self.now = t_arr
                    self.arrive(arr[ai])
                    ai += 1
                self.do_pass()
                self.ended_since_pass = False
            else:
                now = self.now = min(t_end, t_arr)
                while heap and heap[0][0] == now:   # ENDs in start order (seq)
                    self.end_job(heapq.heappop(heap)[2])
                while ai < n and arr[ai].submit == now:
                    self.arrive(arr[ai])
                    ai += 1
                self.do_pass()
                self.ended_since_pass = False
        if self.queue:
            raise RuntimeError(
                f"{len(self.queue)} jobs still waiting after the last event "
                f"(first: id {self.queue[0].id}, reservation {self.queue[0].s}); "
                f"see --wakeup")

    # -- FCFS --------------------------------------------------------------------
    def fcfs_loop(self):
        q = self.queue
        i = 0
        if self.nodes:
            while i < len(q) and q[i].p <= self.n_idle:
                self.start_job(q[i], self.idle_units()[:q[i].p])
                i += 1
        else:
            while i < len(q) and q[i].p <= self.free:
                self.start_job(q[i])
                i += 1
        if i:
            del q[:i]

    def pass_fcfs(self):
        self.fcfs_loop()

    # -- EASY, reservation=count -------------------------------------------------
    def pass_easy_count(self):
        self.fcfs_loop()
        q = self.queue
        if not q or self.free <= 0:       # nothing can start (every p >= 1)
            return
        h = q[0]
        avail = self.free
        S = extra = None
        lst = self.running_by_E
        k, n = 0, len(lst)
        while k < n:
            E = lst[k][0]
            while k < n and lst[k][0] == E:     # all jobs with this E released
                avail += lst[k][2]
                k += 1
            if avail >= h.p:
                S, extra = E, avail - h.p
                break
        assert S is not None
        now = self.now
        started = False
        for c in q[1:]:
            if self.free <= 0:
                break
            if c.p <= self.free:
                ends_by_S = now + self.est(c) <= S
                if ends_by_S or c.p <= extra:
                    self.start_job(c)
                    started = True
                    if not ends_by_S:
                        extra -= c.p
        if started:
            self.queue = [j for j in q if j.start is None]

    # -- EASY, reservation=nodes -------------------------------------------------
    def pass_easy_nodes(self):
        self.fcfs_loop()
        q = self.queue
        if not q or self.n_idle == 0:
            return
        h = q[0]
        now = self.now
        free_from = []
        for u in range(self.P):
            js = self.unit_jobs[u]
            if not js:
                free_from.append(now)
            else:   # EASY: running expected end = start + q, clamped
                free_from.append(max(self.clamp(j.start + j.q) for j in js))
        t = sorted(free_from)[h.p - 1]
        reserved = set()
        for u in range(self.P):
            if free_from[u] <= t:
                reserved.add(u)
                if len(reserved) == h.p:
                    break
        if self.paranoid:
            self._check_easy_nodes_head(h, free_from, t)
        started = False
        for c in q[1:]:
            if self.n_idle == 0:
                break
            if c.p > self.n_idle:
                continue
            idle = self.idle_units()
            if now + self.est(c) > t:
                idle = [u for u in idle if u not in reserved]
            if len(idle) >= c.p:
                self.start_job(c, idle[:c.p])
                started = True
        if started:
            self.queue = [j for j in q if j.start is None]

    def _check_easy_nodes_head(self, h, free_from, t):
        cands = sorted({self.now} | set(free_from))
        for tt in cands:
            if sum(1 for x in free_from if x <= tt) >= h.p:
                assert tt == t, (tt, t)
                return
        raise AssertionError

    # -- Conservative ------------------------------------------------------------
    def pass_cons(self):
        now = self.now
        q = self.queue
        stale = not self.rebuild and self._plan_is_stale()
        self.stale_passes += stale
        if self.rebuild or stale:
            for j in q:
                j.s = None
                j.res_units = None
            revisit = False
        else:
            revisit = self.ended_since_pass
        new = [j for j in q if j.s is None]
        if revisit or new:
            if self.nodes:
                self._place_nodes(revisit, new)
            else:
                self._place_count(revisit, new)
        # 3. start every waiting job whose reservation starts now, in queue order
        # (revised contract: only if it fits now; otherwise it keeps its reservation)
        started = False
        for j in q:
            if j.s == now:
                if self.nodes:
                    if any(self.unit_jobs[u] for u in j.res_units):
                        continue
                elif j.p > self.free:
                    continue
                self.start_job(j, j.res_units if self.nodes else None)
                started = True
        if started:
            self.queue = [j for j in q if j.start is None]

    def _place_count(self, revisit, new):
        now = self.now
        busy = [(j.start, self.clamp_cons(j.start + self.est(j)), j.p)
                for j in self.running.values()]
        busy += [(j.s, j.s + self.est(j), j.p) for j in self.queue if j.s is not None]
        prof = CountProfile(now, self.P, busy)
        order = ([j for j in self.queue if j.s is not None] if revisit else []) + new
        for j in order:
            d = self.est(j)
            if j.s is not None:                       # revisit: remove, re-place
                prof.add(j.s, j.s + d, +j.p)
                j.s = None
            s = prof.earliest_fit(j.p, d)
            if self.paranoid:
                s2 = self._literal_fit_count(j)
                assert s == s2, (j.id, s, s2)
            j.s = s
            prof.add(s, s + d, -j.p)

    def _literal_fit_count(self, job):
        """Contract text, evaluated from scratch (slow; --paranoid only)."""
        now = self.now
        p, d = job.p, self.est(job)
        occ = [(j.start, self.clamp_cons(j.start + self.est(j)), j.p)
               for j in self.running.values()]
        occ += [(j.s, j.s + self.est(j), j.p) for j in self.queue
                if j.s is not None and j is not job]
        cands = sorted({now} | {b for a, b, _ in occ if b > now})

        def free(u):
            return self.P - sum(pp for a, b, pp in occ if a <= u < b)
        for t in cands:
            pts = [t] + [x for a, b, _ in occ for x in (a, b) if t < x < t + d]
            if all(free(u) >= p for u in pts):
                return t
        raise AssertionError

    # conservative, reservation=nodes
    def _place_nodes(self, revisit, new):
        now = self.now
        P = self.P
        busy = [[] for _ in range(P)]     # per unit: sorted (a, b, job idx)
        for j in self.running.values():
            iv = (j.start, self.clamp_cons(j.start + self.est(j)), j.idx)
            for u in j.units:
                busy[u].append(iv)
        for j in self.queue:
            if j.s is not None:
                iv = (j.s, j.s + self.est(j), j.idx)
                for u in j.res_units:
                    busy[u].append(iv)
        for b in busy:
            b.sort()
        order = ([j for j in self.queue if j.s is not None] if revisit else []) + new
        for j in order:
            d = self.est(j)
            if j.s is not None:
                iv = (j.s, j.s + d, j.idx)
                for u in j.res_units:
                    busy[u].remove(iv)
                j.s = None
                j.res_units = None
            s, units = self._nodes_fit(busy, j.p, d)
            if self.paranoid:
                s2, units2 = self._literal_fit_nodes(busy, j.p, d)
                assert (s, units) == (s2, units2), (j.id, s, s2, units, units2)
            j.s, j.res_units = s, units
            iv = (s, s + d, j.idx)
            for u in units:
                bisect.insort(busy[u], iv)

    def _nodes_fit(self, busy, p, d):
        """Unit u can host [t, t + d) iff t lies in [g0, g1 - d] for a gap [g0, g1)
        of u (g0 = now or an end, so the first t reached by p units is a candidate
        of the contract).  Sweep those closed intervals over all units, opening
        (kind 0) before closing (kind 1) at equal times; once every opening at the
        first t with >= p open units is applied, the open units are exactly the
        units free during all of [t, t + d)."""
        now = self.now
        ev = []
        for u in range(self.P):
            cur = now
            for a, b, _ in busy[u]:
                if a - cur >= d:
                    ev.append((cur, 0, u))
                    ev.append((a - d, 1, u))
                if b > cur:
                    cur = b
            ev.append((cur, 0, u))
        ev.sort()
        open_units = set()
        for k, (x, kind, u) in enumerate(ev):
            if kind == 1:
                open_units.discard(u)
                continue
            open_units.add(u)
            if len(open_units) >= p and not (
                    k + 1 < len(ev) and ev[k + 1][0] == x and ev[k + 1][1] == 0):
                return x, sorted(open_units)[:p]
        raise AssertionError("no placement")

    def _literal_fit_nodes(self, busy, p, d):
        now = self.now
        cands = sorted({now} | {b for bu in busy for a, b, _ in bu if b > now})
        for t in cands:
            units = [u for u in range(self.P)
                     if all(not (a < t + d and b > t) for a, b, _ in busy[u])]
            if len(units) >= p:
                return t, units[:p]
        raise AssertionError


# ------------------------------------------------------------------------ output

def fmt(us):
    if us is None:
        return ""
    sign = "-" if us < 0 else ""
    s, f = divmod(abs(us), 1_000_000)
    if f == 0:
        return f"{sign}{s}"
    return f"{sign}{s}.{f:06d}".rstrip("0")


def write_csv(path, jobs):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["job_id", "submit", "start", "end", "wait", "run",
                    "requested", "procs", "outcome"])
        for j in jobs:
            if j.reject is not None:
                w.writerow([j.id, fmt(j.submit), "", "", "", "", fmt(j.q), max(j.p, 0),
                            "rejected"])
                continue
            if j.killed:
                outcome = "killed"
            elif j.failed_status:
                outcome = "failed"
            else:
                outcome = "completed"
            w.writerow([j.id, fmt(j.submit), fmt(j.start), fmt(j.end),
                        fmt(j.start - j.submit), fmt(j.end - j.start), fmt(j.q),
                        j.p, outcome])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--format", choices=("swf", "batsim"))
    ap.add_argument("--procs", type=int)
    ap.add_argument("--policy", default="fcfs")
    ap.add_argument("--walltime-kill", action="store_true")
    ap.add_argument("--out", required=True)
    ap.add_argument("--paranoid", action="store_true",
                    help="cross-check every fast search against a literal, slow "
                         "evaluation of the contract text (for testing)")
    ap.add_argument("--wakeup", choices=("never", "idle"), default="idle",
                    help="conservative only; NOT in the contract, which has no "
                         "event at a reservation start. never: literal (a run may "
                         "end with jobs stuck: an error); idle (default): when no "
                         "END or ARRIVAL is left but jobs wait, run a pass (with "
                         "no event) at the earliest reservation start")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    base = a.trace[:-3] if a.trace.endswith(".gz") else a.trace
    fmt_ = a.format or ("batsim" if base.endswith(".json") else "swf")
    policy, opts = parse_policy(a.policy)
    t0 = time.time()
    jobs, P = (read_batsim if fmt_ == "batsim" else read_swf)(a.trace)
    if a.procs is not None:
        P = a.procs
    if not P or P <= 0:
        raise SystemExit("machine size unknown: no MaxProcs/MaxNodes header; "
                         "use --procs")
    t1 = time.time()
    sim = Sim(jobs, P, policy, opts, a.walltime_kill, a.paranoid, a.wakeup)
    sim.run()
    t2 = time.time()
    write_csv(a.out, jobs)
    if not a.quiet:
        rej = {}
        for j in jobs:
            if j.reject:
                rej[j.reject] = rej.get(j.reject, 0) + 1
        print(f"refsim: {len(jobs)} jobs, P={P}, policy={policy} {opts}, "
              f"rejected={rej}, overcommitted starts={sim.overcommits}, "
              f"passes with a reservation start < now={sim.stale_passes}, "
              f"wake-up passes={sim.wakeups}, "
              f"read {t1 - t0:.1f}s, simulate {t2 - t1:.1f}s", file=sys.stderr)
    if sim.overcommits:
        print(f"refsim: WARNING: {sim.overcommits} job(s) were started on units "
              f"still held by an overrunning job (contract step 'start every "
              f"waiting job with s_j == now')", file=sys.stderr)


if __name__ == "__main__":
    main()
