"""Writing an output file whole or not at all.

Every file a user names (``--out``, a report, a plot, a generated workload) is written
through :func:`write_atomic`: the bytes go to a temporary file beside the target, are
flushed to the disk, and the temporary file is renamed over the target. A failed write
(a full disk, a file-size limit, an interrupt) leaves the target as it was, byte for byte,
and removes the temporary file.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: str | os.PathLike[str], data: bytes | str, *,
                 encoding: str = "utf-8") -> Path:
    """Replace the file ``path`` by ``data`` in one rename; return the path written.

    Parameters
    ----------
    path : path
        The target. An existing file keeps its permission bits; a new one gets the
        usual ones (0666 less the umask). A symbolic link is written through (its target
        is replaced). A target that is not a regular file (``/dev/stdout``, a pipe)
        cannot be renamed over and is written directly.
    data : bytes or str
        The whole content; a str is encoded with ``encoding``.
    encoding : str
        For a str ``data``.

    Raises
    ------
    OSError
        The write, the flush or the rename failed; the target is unchanged and the
        temporary file removed.
    """
    raw = data.encode(encoding) if isinstance(data, str) else bytes(data)
    target = Path(os.path.realpath(path))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(21, "is a directory", str(path))
        with open(target, "wb") as fh:
            fh.write(raw)
        return Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_directory(target.parent)
    return Path(path)


def _sync_directory(directory: Path) -> None:
    """Flush the rename to the disk (best effort: some file systems refuse it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
