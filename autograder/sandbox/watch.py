"""Sandbox side: library randomness used during a watched call (issue 35, A2).

The generator assignments ask for samplers built from the served ``rng.random`` draws. The
forbidden-name scan reads the text, and a list of names is never complete: ``scipy.stats.
gaussian_kde(...).resample(n, seed)``, ``Rotation.random(n, seed)`` and ``differential_evolution(
seed=...)`` all reach numpy's generators through a library's own code. This module watches what
happens instead, around every call whose served generators are restricted (the judge asks with
``"watch"``; the audit assignments' calls are never watched):

* every numpy bit generator made while the call runs, by any route (numpy's ``BitGenerator.__init__``
  takes its lock from ``numpy.random.bit_generator.RLock``, a module global replaced here, so
  ``default_rng``, ``RandomState``, scipy's ``check_random_state`` and a constructor reached from C
  through ``map`` or ``type(obj)`` all pass through it), and every ``random.Random`` made;
* operating-system entropy: ``os.urandom``, ``os.getrandom``, the ``random`` module's ``_urandom``
  (``SystemRandom``, ``secrets``) and numpy's ``randbits`` (an unseeded ``SeedSequence``);
* the state of every numpy bit generator and ``random.Random`` alive when the call starts (numpy's
  and Python's global ones, a generator kept from a cell), read before and after: a use by any
  route, from Python or C, advances it;
* tampering: the replaced globals are checked at each start and end, and the audit hook (which no
  Python code can remove) notes ``gc``'s object walks and ``ctypes``' memory access at any time (a cell's
  included: reported with every later watched call) and a replaced ``Random.__init__`` during a call.

What is seen goes back with the reply (``"watch"``: short texts); the judge records it in its own
``RecordingGenerator`` and fails the call's check. A reply to a watched request without the entry is
a finding too. Everything here runs in the student's process, so a submission that finds and rewrites
it in place can hide from it; the routes to do so (``numpy.random``'s internals by name, frames, ``gc``,
``ctypes``) are what the forbidden-name scan and the audit hook see.
"""

import gc
import os
import random
import sys

import _random
import numpy as np
import numpy.random.bit_generator as _bit_generator

#: Most entries of one report (the judge needs one; the rest name what else was seen).
MAX_SEEN = 8
#: Audit events that reach into the process's memory or object graph: noted during a watched call.
_AUDITED = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames",
                      "ctypes.addressof", "ctypes.cdata", "ctypes.cdata/buffer", "ctypes.string_at",
                      "ctypes.wstring_at", "ctypes.call_function"})


#: Where the installed libraries and the standard library live (read-only in the sandbox): module-level
#: code of these files may make generators while it is imported (``import scipy.stats`` makes a dozen for
#: its docstrings' examples), also when a student's function imports it at its first call.
_TRUSTED = tuple(sorted({os.path.dirname(os.__file__) + os.sep,
                         os.path.dirname(os.path.dirname(os.path.abspath(np.__file__))) + os.sep}))
#: This file: its wrappers' frames stand between a library's code and the entropy it asks for.
_SELF = os.path.abspath(__file__)
#: Frames passed over: this file's, and generator.py's ``default_rng`` (a library's import calling
#: ``np.random.default_rng`` goes through it).
_TRANSPARENT = frozenset({_SELF, os.path.join(os.path.dirname(_SELF), "generator.py")})
#: Events that make or run code under a file name of their own: with a library's file name outside the
#: import system, code could pass for a library module being imported.
_CODE_EVENTS = frozenset({"compile", "exec", "code.__new__", "marshal.loads", "marshal.load"})


def _library_import(frame) -> bool:
    """Whether ``frame`` (the Python code that made a generator or asked for entropy) runs, through
    library code only, inside a library module's own import (its ``<module>`` code under :data:`_TRUSTED`):
    not the student's doing. Any student frame on the way (a cell, a callback, a file of its own) is not."""
    while frame is not None:
        code = frame.f_code
        name = code.co_filename
        if name in _TRANSPARENT:
            frame = frame.f_back
            continue
        if not name.startswith(_TRUSTED):
            return False
        if code.co_name == "<module>":
            return True
        frame = frame.f_back
    return False


def _freeze(value):
    """A bit generator's state (dicts, ints, arrays) as something ``==`` compares in full."""
    if isinstance(value, dict):
        return tuple((k, _freeze(v)) for k, v in sorted(value.items()))
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    return value


class _Watch:
    def __init__(self):
        self.active = False
        self.scanning = False
        self.seen = []
        self.dirty = True          # a generator may exist that the last scan did not find
        self.known = []            # (object, read its state) of the generators alive
        self.before = []
        self.states = {}           # numpy bit generator type -> its own ``state`` property
        self.originals = {}
        self.wrappers = {}
        self.global_numpy = None
        self.tampered = None       # sticky: what a cell or call did to read the process's objects

    # --- what is noted -------------------------------------------------------------------
    def note(self, what):
        if self.active and len(self.seen) < MAX_SEEN and what not in self.seen:
            self.seen.append(what)

    def note_unless_import(self, what, frame):
        self.scanning = True  # sys._getframe's own audit event
        try:
            if not _library_import(frame):
                self.note(what)
        finally:
            self.scanning = False

    def install(self):
        """Replace the globals every route to library randomness passes through (before any student code)."""
        watch = self
        made_lock = _bit_generator.RLock
        entropy = _bit_generator.randbits

        def RLock(*args, **kwargs):  # noqa: N802 - numpy's BitGenerator.__init__ calls it by this name
            watch.dirty = True
            if watch.active:
                watch.note_unless_import("numpy.random: a new bit generator (default_rng, RandomState, PCG64, "
                                         "MT19937, ... or a library's check_random_state)", sys._getframe(1))
            return made_lock(*args, **kwargs)

        def randbits(*args, **kwargs):
            if watch.active:
                watch.note_unless_import("numpy.random.SeedSequence() seeded from the operating system's entropy",
                                         sys._getframe(1))
            return entropy(*args, **kwargs)

        def urandom_of(original, name):
            def urandom(*args, **kwargs):
                if watch.active:
                    watch.note_unless_import(f"{name} (the operating system's entropy)", sys._getframe(1))
                return original(*args, **kwargs)
            return urandom

        random_init = random.Random.__init__

        def __init__(self, *args, **kwargs):  # noqa: N807
            watch.dirty = True
            if watch.active:
                watch.note_unless_import(f"a new {type(self).__module__}.{type(self).__qualname__} (Python's "
                                         f"random module)", sys._getframe(1))
            return random_init(self, *args, **kwargs)

        targets = [(_bit_generator, "RLock", RLock), (_bit_generator, "randbits", randbits),
                   (os, "urandom", urandom_of(os.urandom, "os.urandom")),
                   (random, "_urandom", urandom_of(random._urandom, "random.SystemRandom / secrets"))]
        if hasattr(os, "getrandom"):
            targets.append((os, "getrandom", urandom_of(os.getrandom, "os.getrandom")))
        for owner, name, wrapper in targets:
            self.originals[(owner, name)] = getattr(owner, name)
            self.wrappers[(owner, name)] = wrapper
            setattr(owner, name, wrapper)
        random.Random.__init__ = __init__
        self.wrappers[(random.Random, "__init__")] = __init__
        self.global_numpy = getattr(np.random.mtrand._rand, "_bit_generator", None)
        sys.addaudithook(self.audit)

    def audit(self, event, args):
        if self.scanning:
            return
        if event in _CODE_EVENTS:
            self.code_event(event, args)
        elif event in _AUDITED:
            # at any time, a cell's included: honest code never walks the process's objects or memory
            # (importing numpy, scipy and matplotlib and plotting raise none of these events)
            self.tampered = f"{event} (reading the grader's process)"
            self.note(self.tampered)
        elif self.active and event == "object.__setattr__" and args and args[0] is random.Random:
            self.note("random.Random changed during the call")

    def code_event(self, event, args):
        """Code made or run outside the import system under a library's file name (or a code object loaded
        with marshal, whose name cannot be read here): it could pass for a library's import
        (:func:`_library_import`). Sticky, as the object walks above."""
        self.scanning = True
        try:
            caller = sys._getframe(2)  # 0: here, 1: audit, 2: the Python code that called compile/exec/...
            if caller is not None and caller.f_code.co_filename.startswith("<frozen importlib"):
                return
            if event.startswith("marshal."):
                name = "?"
            elif event == "exec":
                name = getattr(args[0], "co_filename", "") if args else ""
            else:
                name = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
            if name == "?" or name in _TRANSPARENT or name.startswith(_TRUSTED):
                self.tampered = f"{event} of code named {str(name)[:80]} (passing for a library's code)"
                self.note(self.tampered)
        finally:
            self.scanning = False

    def intact(self):
        for (owner, name), wrapper in self.wrappers.items():
            if owner.__dict__.get(name) is not wrapper:
                self.note(f"the grader's watch was switched off ({getattr(owner, '__name__', owner)}.{name} replaced)")
                self.dirty = True

    # --- the generators alive --------------------------------------------------------------
    def _state_reader(self, obj):
        kind = type(obj)
        if kind in self.states:
            return self.states[kind]
        reader = None
        if isinstance(obj, np.random.BitGenerator):
            for cls in kind.__mro__:
                prop = cls.__dict__.get("state")
                if cls.__module__.startswith("numpy.random") and hasattr(prop, "__get__"):
                    reader = (lambda get: lambda o: _freeze(get(o, type(o))))(prop.__get__)
                    break
        elif isinstance(obj, _random.Random):
            try:
                _random.Random.getstate(obj)
                reader = _random.Random.getstate
            except Exception:  # noqa: BLE001 - SystemRandom has no state (its entropy is watched)
                reader = None
        self.states[kind] = reader
        return reader

    def scan(self):
        self.scanning = True
        try:
            found = [o for o in gc.get_objects() if isinstance(o, (np.random.BitGenerator, _random.Random))]
        finally:
            self.scanning = False
        self.known = [(o, r) for o in found for r in (self._state_reader(o),) if r is not None]
        self.dirty = False

    def _read(self):
        states = []
        for obj, read in self.known:
            try:
                states.append(read(obj))
            except Exception:  # noqa: BLE001 - a state that cannot be read changes from None to something
                states.append(None)
        return states

    # --- a watched call --------------------------------------------------------------------
    def start(self):
        self.seen = []
        self.active = True
        if self.tampered:
            self.note(self.tampered)
        try:
            self.intact()
            if self.dirty:
                self.scan()
            self.before = self._read()
        except Exception as exc:  # noqa: BLE001 - the student's code broke something the watch reads
            self.known, self.before = [], []
            self.note(f"the grader's watch could not start ({type(exc).__name__})")

    def stop(self):
        try:
            self.intact()
            after = self._read()
            if len(after) != len(self.before):
                self.note("the grader's watch lost its record")
            for (obj, _), old, new in zip(self.known, self.before, after):
                if old != new:
                    kind = type(obj)
                    if obj is self.global_numpy:
                        self.note("numpy.random's global generator (np.random.*, or a library's default random_state)")
                    elif obj is getattr(random, "_inst", None):
                        self.note("Python's random module (random.random, random.gauss, ...)")
                    else:
                        self.note(f"a {kind.__module__}.{kind.__qualname__} made before the call drew numbers")
        finally:
            self.active = False
        return list(self.seen)


_WATCH = _Watch()
_WATCH.install()
start = _WATCH.start
stop = _WATCH.stop
