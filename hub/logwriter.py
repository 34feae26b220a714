"""A log's writer: ``python logwriter.py LOG MAX MODE`` (or its text as ``python -c``, hub/spawner.py).

What comes on stdin is appended to LOG; when LOG holds MAX bytes (or more, from before) it becomes
``LOG.1`` (one earlier file) and LOG begins anew, created with the octal MODE: the newest output is
kept, at most 2 x MAX bytes on disk. Ends when every writer of its stdin has closed it; ignores
SIGINT and SIGTERM (a Ctrl-C or a stop of the hub does not lose the last lines). For every log a
student's processes or anyone's requests can grow (hub/README.md, "Logs").
"""
import os
import signal
import sys

signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
path, cap, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 8)
flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
fd = os.open(path, flags, mode)
size = os.fstat(fd).st_size
while chunk := os.read(0, 1 << 16):
    while chunk:
        if size >= cap:
            os.close(fd)
            os.replace(path, path + ".1")
            fd, size = os.open(path, flags, mode), 0
        piece, chunk = chunk[:cap - size], chunk[cap - size:]
        os.write(fd, piece)
        size += len(piece)
