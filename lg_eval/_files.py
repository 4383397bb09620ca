"""Output files written whole or not at all: a temporary file beside the target, then a rename.

A report or dataset file written in place is left truncated when the disk fills
or the process dies mid-write, and a half-written JUnit file or HTML report looks
like a result. Here every byte goes to a temporary file in the target's directory
(so the rename stays on one filesystem), which is flushed, synced and then moved
over the target with :func:`os.replace`: a reader sees the old file or the new
one, never a mix. A failure removes the temporary file, leaves any old file as it
was, and raises :class:`~lg_eval.errors.OutputWriteError` naming the path.

New files are created ``0600``, like the results store: a report holds the same
thread text the store does. A file that already exists keeps its mode, so a
report someone made world-readable on purpose stays so when it is rewritten. A
symlink at the target is not followed, for its mode or its content: it is
replaced by the new file (``os.replace`` renames over the link itself), so a link
planted at a report's path can neither lend the report its target's mode nor
make lg_eval write through it.

Folders lg_eval creates (for a report, a store, a checkpointer file) are
``0700`` whatever the umask: :func:`private_dirs`.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from lg_eval.errors import OutputWriteError

NEW_FILE_MODE = 0o600
"""The mode of a report or output file lg_eval creates (an existing file keeps its own)."""
NEW_DIR_MODE = 0o700
"""The mode of every folder lg_eval creates."""


def private_dirs(directory: Path) -> list[Path]:
    """Create ``directory`` and its missing parents, each ``0700`` whatever the umask
    (``mkdir``'s mode is filtered by it, so each is set again); the folders created,
    outermost first. Existing folders are left as they are.

    Raises:
        OSError: a folder cannot be created.
    """
    missing = [p for p in [directory, *directory.parents] if not p.exists()][::-1]
    for folder in missing:
        try:
            folder.mkdir(mode=NEW_DIR_MODE)
        except FileExistsError:
            continue  # made meanwhile by someone else: theirs, left as it is
        os.chmod(folder, NEW_DIR_MODE)
    return missing


@contextlib.contextmanager
def atomic_writer(path: str | Path) -> Iterator[IO[str]]:
    """A text handle whose content replaces ``path`` when the block ends without error.

    Parent directories are created. If the block raises, or writing, syncing or
    renaming fails, the target is untouched and the temporary file is removed.

    Raises:
        OutputWriteError: the file could not be written (the disk is full, the
            directory is not writable, ...); the message names the path and why.
    """
    target = Path(path)
    try:
        private_dirs(target.parent)
        fd, temporary = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
        )
    except OSError as exc:
        raise _write_error(target, exc) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, _mode_for(target))
        os.replace(temporary, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise _write_error(target, exc) from None
        raise


def write_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all; returns the path.

    Raises:
        OutputWriteError: as :func:`atomic_writer`.
    """
    with atomic_writer(path) as handle:
        handle.write(text)
    return Path(path)


def _mode_for(target: Path) -> int:
    """The mode of the file being replaced (never a symlink's target's), else 0600."""
    try:
        found = target.lstat()
    except OSError:
        return NEW_FILE_MODE
    return stat.S_IMODE(found.st_mode) if stat.S_ISREG(found.st_mode) else NEW_FILE_MODE


def _write_error(target: Path, exc: OSError) -> OutputWriteError:
    reason = exc.strerror or type(exc).__name__
    return OutputWriteError(
        f"cannot write {target}: {reason}; the file was left as it was (free space or "
        "fix the permissions, then run again)."
    )
