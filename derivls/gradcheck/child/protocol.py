"""What the child writes: a JSON line on stdout (emit), a message cut short (summarize), its resident memory
(rss_bytes)."""

import json
import sys


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def summarize(message):
    lines = [line for line in message.strip().splitlines() if line.strip()]
    text = "\n".join(lines[:4])
    return text[:500]


def rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            import os

            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0
