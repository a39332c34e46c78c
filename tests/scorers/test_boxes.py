"""scorers.boxes against independent references (a coordinate-compressed area count and a
pixel raster) on randomized boxes, plus hand-computed edge cases."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from scorers.boxes import (
    MAP_THRESHOLDS,
    InvalidBoxError,
    acc_at_iou,
    box_area,
    check_box,
    clip_box,
    enclosing_box,
    from_pixels,
    iou,
    iou_matrix,
    map_50_95,
    pairwise_iou,
    point_in_box,
    to_pixels,
    validate_box,
)


def _reference_iou(a, b) -> float:
    """IoU by coordinate compression: split the plane at every box edge and add up the cells
    covered by both / by either box (a different algorithm from min/max clipping)."""
    xs = sorted({a[0], a[2], b[0], b[2]})
    ys = sorted({a[1], a[3], b[1], b[3]})

    def inside(box, cx, cy):
        return box[0] <= cx <= box[2] and box[1] <= cy <= box[3]

    inter = union = 0.0
    for i in range(len(xs) - 1):
        for j in range(len(ys) - 1):
            cx, cy = (xs[i] + xs[i + 1]) / 2, (ys[j] + ys[j + 1]) / 2
            cell = (xs[i + 1] - xs[i]) * (ys[j + 1] - ys[j])
            in_a, in_b = inside(a, cx, cy), inside(b, cx, cy)
            inter += cell * (in_a and in_b)
            union += cell * (in_a or in_b)
    return inter / union if union else 0.0


def _raster_iou(a, b, size=64) -> float:
    """IoU of integer boxes by counting unit pixels on a raster."""
    ma = np.zeros((size, size), bool)
    mb = np.zeros((size, size), bool)
    ma[a[1] : a[3], a[0] : a[2]] = True
    mb[b[1] : b[3], b[0] : b[2]] = True
    union = (ma | mb).sum()
    return float((ma & mb).sum() / union) if union else 0.0


def _random_box(rng: random.Random, hi: float, integer: bool):
    if integer:
        x1, x2 = sorted(rng.sample(range(int(hi) + 1), 2))
        y1, y2 = sorted(rng.sample(range(int(hi) + 1), 2))
    else:
        x1, x2 = sorted(rng.uniform(0, hi) for _ in range(2))
        y1, y2 = sorted(rng.uniform(0, hi) for _ in range(2))
    return (x1, y1, x2, y2)


def test_iou_matches_coordinate_compression_reference_on_random_float_boxes():
    rng = random.Random(0)
    for _ in range(2000):
        a, b = _random_box(rng, 100.0, False), _random_box(rng, 100.0, False)
        assert iou(a, b) == pytest.approx(_reference_iou(a, b), abs=1e-12)


def test_iou_matches_pixel_raster_on_random_integer_boxes():
    rng = random.Random(1)
    for _ in range(1000):
        a, b = _random_box(rng, 64, True), _random_box(rng, 64, True)
        assert iou(a, b) == pytest.approx(_raster_iou(a, b), abs=1e-12)


def test_vectorised_iou_equals_scalar_iou():
    rng = random.Random(2)
    a = [_random_box(rng, 50.0, False) for _ in range(30)]
    b = [_random_box(rng, 50.0, False) for _ in range(20)]
    m = iou_matrix(a, b)
    assert m.shape == (30, 20)
    for i in range(30):
        for j in range(20):
            assert m[i, j] == pytest.approx(iou(a[i], b[j]), abs=1e-12)
    p = pairwise_iou(a[:20], b)
    assert p == pytest.approx([iou(x, y) for x, y in zip(a[:20], b, strict=True)], abs=1e-12)
    assert iou_matrix([], b).shape == (0, 20)
    with pytest.raises(ValueError, match="differ in shape"):
        pairwise_iou(a, b)
    with pytest.raises(ValueError, match=r"\(n, 4\)"):
        iou_matrix([[1, 2, 3]], b)


def test_iou_hand_computed_cases():
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    # half overlap: inter 50, union 150
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(1 / 3)
    # contained: 25 / 100
    assert iou((0, 0, 10, 10), (0, 0, 5, 5)) == 0.25
    # touching edges only
    assert iou((0, 0, 10, 10), (10, 0, 20, 10)) == 0.0
    # disjoint
    assert iou((0, 0, 1, 1), (5, 5, 6, 6)) == 0.0
    # symmetric
    assert iou((1, 2, 7, 9), (3, 1, 8, 4)) == iou((3, 1, 8, 4), (1, 2, 7, 9))
    # a degenerate box has no area: IoU 0 with itself rather than a division by zero
    assert iou((3, 3, 3, 8), (3, 3, 3, 8)) == 0.0
    # scale invariance: normalising by (W, H) leaves IoU unchanged (DLaVA normalises)
    a, b, size = (10, 20, 110, 70), (30, 10, 130, 90), (400, 200)
    assert iou(from_pixels(a, "0-1", size), from_pixels(b, "0-1", size)) == pytest.approx(iou(a, b))


def test_acc_at_iou_and_map_hand_computed():
    assert MAP_THRESHOLDS == (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
    ious = [1.0, 0.75, 0.5, 0.0]
    assert acc_at_iou(ious, 0.5) == 0.75
    assert acc_at_iou(ious, 0.75) == 0.5  # >=, so 0.75 counts at t = 0.75
    assert acc_at_iou(ious, 0.8) == 0.25
    # per threshold: 0.5 -> 3/4; 0.55..0.75 (5 thresholds) -> 2/4; 0.8..0.95 (4) -> 1/4
    assert map_50_95(ious) == pytest.approx((0.75 + 5 * 0.5 + 4 * 0.25) / 10)
    assert map_50_95([1.0] * 5) == 1.0
    assert map_50_95([0.49] * 5) == 0.0
    assert map_50_95([0.96]) == 1.0
    assert map_50_95([0.95]) == 1.0
    assert math.isnan(map_50_95([]))
    assert math.isnan(acc_at_iou([], 0.5))
    # an IoU of exactly 0.7 computed in floating point (inter/union = 7/10) meets t = 0.7
    assert iou((0, 0, 10, 7), (0, 0, 10, 10)) == pytest.approx(0.7)
    assert acc_at_iou([iou((0, 0, 10, 7), (0, 0, 10, 10))], 0.7) == 1.0
    with pytest.raises(ValueError, match="missing box as IoU 0"):
        acc_at_iou([0.5, float("nan")], 0.5)
    with pytest.raises(ValueError):
        acc_at_iou([1.2], 0.5)


def _reference_map(ious) -> float:
    """DLaVA's definition written out with a loop over np.arange thresholds."""
    total = 0.0
    thresholds = np.arange(0.5, 0.96, 0.05)
    for t in thresholds:
        total += sum(1 for v in ious if v >= round(float(t), 2)) / len(ious)
    return total / len(thresholds)


def test_map_matches_reference_loop_on_random_cases():
    rng = random.Random(3)
    for _ in range(300):
        n = rng.randint(1, 40)
        preds = [_random_box(rng, 100.0, False) for _ in range(n)]
        golds = [_random_box(rng, 100.0, False) for _ in range(n)]
        # push some pairs to high overlap so every threshold is exercised
        for k in range(0, n, 3):
            g = golds[k]
            d = rng.uniform(0, 3)
            preds[k] = (g[0] + d, g[1], g[2] + d, g[3])
        ious = pairwise_iou(preds, golds)
        assert map_50_95(ious) == pytest.approx(_reference_map(ious), abs=1e-12)


def test_enclosing_box_merges_several_predictions():
    assert enclosing_box([(10, 20, 30, 40), (5, 25, 20, 60), (12, 22, 50, 30)]) == (5, 20, 50, 60)
    assert enclosing_box([(1, 2, 3, 4)]) == (1, 2, 3, 4)
    assert enclosing_box(np.array([[1, 2, 3, 4], [0, 0, 1, 1]])) == (0, 0, 3, 4)
    with pytest.raises(ValueError, match="no boxes"):
        enclosing_box([])


def test_point_in_box():
    box = (10, 10, 20, 30)
    assert point_in_box((15, 20), box)
    assert point_in_box((10, 30), box)  # corner, inclusive
    assert not point_in_box((10, 30), box, inclusive=False)
    assert not point_in_box((9.99, 20), box)
    assert not point_in_box((15, 30.01), box)


def test_validate_box_reasons():
    assert validate_box((0, 0, 10, 10)) is None
    assert validate_box((0, 0, 10, 10), (10, 10)) is None
    assert "4 numbers" in validate_box((1, 2, 3))
    assert "4 numbers" in validate_box("1,2,3,4")
    assert "4 numbers" in validate_box((1, 2, "a", 4))
    assert "non-finite" in validate_box((0, 0, float("inf"), 4))
    assert "non-finite" in validate_box((0, float("nan"), 3, 4))
    r = validate_box((5, 0, 5, 10))
    assert "degenerate" in r and "x2=5 <= x1=5" in r
    r = validate_box((0, 9, 10, 3))
    assert "degenerate" in r and "y2=3 <= y1=9" in r
    assert "outside the 100x50 image" in validate_box((120, 0, 130, 10), (100, 50))
    assert "outside the 100x50 image" in validate_box((-20, -20, -1, -1), (100, 50))
    assert "crosses the edge" in validate_box((90, 0, 110, 10), (100, 50))
    assert "crosses the edge" in validate_box((-1, 0, 10, 10), (100, 50))
    assert validate_box((-0.5, 0, 100.5, 50), (100, 50), tolerance=1) is None
    with pytest.raises(ValueError, match="positive"):
        validate_box((0, 0, 1, 1), (0, 10))


def test_check_box_raises_with_where():
    assert check_box([1, 2, 3, 4]) == (1.0, 2.0, 3.0, 4.0)
    with pytest.raises(InvalidBoxError, match=r"^receipt 007 line 3: degenerate"):
        check_box((3, 3, 1, 5), where="receipt 007 line 3")
    with pytest.raises(InvalidBoxError, match="outside the 10x10 image"):
        check_box((20, 20, 30, 30), (10, 10))


def test_clip_and_area():
    assert clip_box((-5, 2, 120, 60), (100, 50)) == (0, 2, 100, 50)
    assert box_area((0, 0, 4, 5)) == 20
    assert box_area((4, 0, 0, 5)) == 0


def test_box_formats_round_trip():
    size = (800, 600)
    px = (80, 60, 400, 300)
    assert to_pixels((100, 100, 500, 500), "0-1000", size) == pytest.approx(px)
    assert to_pixels((0.1, 0.1, 0.5, 0.5), "0-1", size) == pytest.approx(px)
    assert to_pixels(px, "pixels", size) == px
    for fmt in ("pixels", "0-1000", "0-1"):
        assert to_pixels(from_pixels(px, fmt, size), fmt, size) == pytest.approx(px)
    with pytest.raises(ValueError, match="unknown box format"):
        to_pixels(px, "percent", size)  # type: ignore[arg-type]
