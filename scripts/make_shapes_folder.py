#!/usr/bin/env python3
"""Draws resources/examples/shapes/: the folder of images the image_folder_shapes.json lesson
reads, one subfolder per class (circle, square, triangle), 100 pictures each, 40 x 40 pixels:
a shape of random color, size, place and turn on a random light background with a little noise.
Every fifth picture is a JPEG, the rest PNG. Deterministic (seeded); run again to redraw:
  /usr/bin/python3 scripts/make_shapes_folder.py   (needs python3-pil and python3-numpy)
"""
import math
import pathlib

import numpy as np
from PIL import Image, ImageDraw

SIDE = 40
PER_CLASS = 100
root = pathlib.Path(__file__).resolve().parent.parent / "resources" / "examples" / "shapes"
rng = np.random.default_rng(2026)


def draw(kind):
    background = tuple(int(v) for v in rng.integers(170, 256, 3))
    image = Image.new("RGB", (SIDE, SIDE), background)
    pen = ImageDraw.Draw(image)
    color = tuple(int(v) for v in rng.integers(0, 150, 3))
    r = float(rng.uniform(9, 15))
    cx, cy = (float(v) for v in rng.uniform(r + 2, SIDE - r - 2, 2))
    turn = float(rng.uniform(0, 2 * math.pi))
    if kind == "circle":
        pen.ellipse([cx - r, cy - r, cx + r, cy + r], fill=color)
    else:
        corners = 4 if kind == "square" else 3
        points = [(cx + r * math.cos(turn + 2 * math.pi * k / corners),
                   cy + r * math.sin(turn + 2 * math.pi * k / corners)) for k in range(corners)]
        pen.polygon(points, fill=color)
    pixels = np.asarray(image, dtype=np.int16) + rng.integers(-6, 7, (SIDE, SIDE, 3))
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))


for kind in ("circle", "square", "triangle"):
    folder = root / kind
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for i in range(PER_CLASS):
        image = draw(kind)
        if i % 5 == 4:
            image.save(folder / f"{kind}_{i:03d}.jpg", quality=92)
        else:
            image.save(folder / f"{kind}_{i:03d}.png", optimize=True)
