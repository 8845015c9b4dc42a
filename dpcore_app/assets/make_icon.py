"""Draw the app's icon (a shield with a lock) as assets/icon.png, with the standard library.

The page icon is a local file so that no browser ever fetches it from a font server: the
app runs offline.

    python assets/make_icon.py
"""

import struct
import zlib
from collections.abc import Iterable
from pathlib import Path

#: A pixel's red, green, blue and opacity, 0 to 255 each.
RGBA = tuple[int, int, int, int]

SIZE = 64
BLUE, WHITE, CLEAR = (0, 114, 178, 255), (255, 255, 255, 255), (0, 0, 0, 0)


def pixel(x: int, y: int) -> RGBA:
    """The icon's colour at column ``x`` and row ``y`` (0 to SIZE - 1, rows growing downwards)."""
    u, v = (x + 0.5) / SIZE, (y + 0.5) / SIZE  # 0..1, v grows downwards
    half = 0.40 if v < 0.55 else 0.40 * max(0.0, (1.0 - v) / 0.45) ** 0.8  # shield outline
    if not (0.06 < v < 0.97 and abs(u - 0.5) < half):
        return CLEAR
    if 0.30 < u < 0.70 and 0.47 < v < 0.74:  # lock body
        return WHITE
    ring = ((u - 0.5) ** 2 + (v - 0.45) ** 2) ** 0.5  # lock shackle
    if 0.11 < ring < 0.165 and v < 0.47:
        return WHITE
    return BLUE


def png(width: int, height: int, rows: Iterable[Iterable[RGBA]]) -> bytes:
    """A PNG file of ``rows`` (top first) of ``width`` RGBA pixels each, 8 bits a channel."""

    def chunk(kind, data):
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    raw = b"".join(b"\x00" + bytes(c for px in row for c in px) for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


if __name__ == "__main__":
    rows = [[pixel(x, y) for x in range(SIZE)] for y in range(SIZE)]
    (Path(__file__).parent / "icon.png").write_bytes(png(SIZE, SIZE, rows))
