"""NCI, fDBD, z* and the baselines against hand-computed and brute-force references."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import log_softmax, logsumexp
from scipy.stats import entropy

from methods.ood import (
    DEFAULT_DETECTORS,
    LMHead,
    TokenTrace,
    aggregate,
    decision_neutral_point,
    fdbd_token_scores,
    greybox_scores,
    greybox_token_scores,
    log_prob_token_scores,
    make_detector,
    max_prob_token_scores,
    nci_token_scores,
    neg_energy_token_scores,
    neg_entropy_token_scores,
    score_all,
)

W3 = np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, -1.0]])


def _trace(z: np.ndarray, head: LMHead, ids=None) -> TokenTrace:
    z = np.atleast_2d(z)
    logits = z @ head.weight.T + (0.0 if head.bias is None else head.bias)
    if ids is None:
        ids = logits.argmax(axis=1)
    return TokenTrace(features=z, logits=logits, token_ids=np.asarray(ids))


def _random_head(rng, v=12, d=5, bias=True) -> LMHead:
    return LMHead(rng.normal(size=(v, d)), rng.normal(size=v) if bias else None)


# ---------------------------------------------------------------- z*
def test_neutral_point_zero_without_bias_or_constant_bias() -> None:
    rng = np.random.default_rng(0)
    w = rng.normal(size=(9, 4))
    assert np.array_equal(decision_neutral_point(w, None), np.zeros(4))
    assert np.allclose(decision_neutral_point(w, np.zeros(9)), 0.0)
    assert np.allclose(decision_neutral_point(w, np.full(9, 3.7)), 0.0, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("shape", [(10, 3), (4, 6)])  # (4, 6): WᵀPW is singular
def test_neutral_point_matches_closed_form(seed: int, shape) -> None:
    rng = np.random.default_rng(seed)
    v, d = shape
    w, b = rng.normal(size=(v, d)), rng.normal(size=v)
    p = np.eye(v) - np.ones((v, v)) / v
    expected = -np.linalg.pinv(w.T @ p @ w) @ w.T @ p @ b
    z = decision_neutral_point(w, b)
    assert np.allclose(z, expected, atol=1e-9)
    # It minimises the variance of the logits across the vocabulary.
    var = lambda x: np.var(w @ x + b)  # noqa: E731
    for _ in range(20):
        assert var(z) <= var(z + 1e-3 * rng.normal(size=d)) + 1e-12


def test_head_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match="bias must have shape"):
        LMHead(np.zeros((3, 2)), np.zeros(4))
    with pytest.raises(ValueError, match=r"\(V, d\)"):
        LMHead(np.zeros(3))


# ---------------------------------------------------------------- NCI
def test_nci_hand_computed() -> None:
    head = LMHead(W3)
    z = np.array([3.0, 1.0])  # logits (3, 2, -4): ĉ = 0
    assert nci_token_scores(_trace(z, head), head)[0] == pytest.approx(3.0 / np.sqrt(10.0))
    z2 = np.array([0.5, 1.0])  # logits (0.5, 2, -1.5): ĉ = 1, w1·z/‖z‖
    assert nci_token_scores(_trace(z2, head), head)[0] == pytest.approx(2.0 / np.sqrt(1.25))


def test_nci_with_bias_uses_neutral_point() -> None:
    rng = np.random.default_rng(1)
    head = _random_head(rng)
    z = rng.normal(size=(4, 5))
    tr = _trace(z, head)
    zs = head.neutral_point
    for t in range(4):
        c = int(np.argmax(tr.logits[t]))
        w = head.weight[c]
        d = z[t] - zs
        cos = w @ d / (np.linalg.norm(w) * np.linalg.norm(d))
        assert nci_token_scores(tr, head)[t] == pytest.approx(cos * np.linalg.norm(w))
    assert np.linalg.norm(zs) > 0.01  # a real bias moves z* off the origin


def test_nci_and_fdbd_scale_invariant_for_bias_free_head() -> None:
    rng = np.random.default_rng(2)
    head = _random_head(rng, bias=False)
    z = rng.normal(size=(3, 5))
    for fn in (nci_token_scores, lambda t, h: fdbd_token_scores(t, h, k=4)):
        assert np.allclose(fn(_trace(z, head), head), fn(_trace(7.0 * z, head), head))


# ---------------------------------------------------------------- fDBD
def test_fdbd_hand_computed() -> None:
    head = LMHead(W3)
    tr = _trace(np.array([3.0, 1.0]), head)  # ĉ = 0, runner-up 1, then 2
    d1 = abs((W3[0] - W3[1]) @ [3, 1]) / np.linalg.norm(W3[0] - W3[1])  # 1/√5
    d2 = abs((W3[0] - W3[2]) @ [3, 1]) / np.linalg.norm(W3[0] - W3[2])  # 7/√5
    norm = np.sqrt(10.0)
    assert fdbd_token_scores(tr, head, k=1)[0] == pytest.approx(d1 / norm)
    assert fdbd_token_scores(tr, head, k=2)[0] == pytest.approx((d1 + d2) / 2 / norm)
    assert fdbd_token_scores(tr, head, k=None)[0] == pytest.approx((d1 + d2) / 2 / norm)
    assert fdbd_token_scores(tr, head, k=50)[0] == pytest.approx((d1 + d2) / 2 / norm)


def _fdbd_brute(z, head: LMHead, k: int) -> float:
    logits = head.weight @ z + (0.0 if head.bias is None else head.bias)
    c = int(np.argmax(logits))
    order = [i for i in np.argsort(-logits, kind="stable") if i != c][:k]
    b = np.zeros(head.vocab_size) if head.bias is None else head.bias
    ds = [
        abs((head.weight[c] - head.weight[j]) @ z + b[c] - b[j])
        / np.linalg.norm(head.weight[c] - head.weight[j])
        for j in order
    ]
    return float(np.mean(ds) / np.linalg.norm(z - head.neutral_point))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 3, 11])
def test_fdbd_matches_brute_force_with_bias(seed: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    head = _random_head(rng)
    z = rng.normal(size=(6, 5))
    got = fdbd_token_scores(_trace(z, head), head, k=k)
    assert np.allclose(got, [_fdbd_brute(zt, head, k) for zt in z])


def test_fdbd_top_k_excludes_argmax_even_with_ties() -> None:
    # Class 0 and 1 tie at the max: argmax picks 0; k=1 must use class 1 (distance 0), not 0.
    w = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    head = LMHead(w)
    z = np.array([[2.0, 0.5]])
    tr = TokenTrace(z, z @ w.T, np.array([0]))
    # w0 - w1 = 0 -> distance 0/eps guarded = 0 (a point on the boundary is least confident)
    assert fdbd_token_scores(tr, head, k=1)[0] == pytest.approx(0.0)
    # A confident feature (far from the boundary) scores higher than a near-boundary one.
    head2 = LMHead(W3)
    far = fdbd_token_scores(_trace(np.array([5.0, -1.0]), head2), head2, k=1)[0]
    near = fdbd_token_scores(_trace(np.array([1.0, 0.45]), head2), head2, k=1)[0]
    assert far > near


def test_fdbd_bad_k() -> None:
    head = LMHead(W3)
    with pytest.raises(ValueError, match="k ≥ 1"):
        fdbd_token_scores(_trace(np.array([1.0, 1.0]), head), head, k=0)


# ---------------------------------------------------------------- baselines
def test_baselines_match_scipy() -> None:
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(5, 20)) * 3
    ids = rng.integers(0, 20, 5)
    tr = TokenTrace(rng.normal(size=(5, 4)), logits, ids)
    ls = log_softmax(logits, axis=1)
    assert np.allclose(log_prob_token_scores(tr), ls[np.arange(5), ids])
    assert np.allclose(max_prob_token_scores(tr), np.exp(ls).max(axis=1))
    assert np.allclose(neg_entropy_token_scores(tr), -entropy(np.exp(ls), axis=1))
    assert np.allclose(neg_energy_token_scores(tr), logsumexp(logits, axis=1))
    assert np.allclose(
        neg_energy_token_scores(tr, temperature=2.0), 2.0 * logsumexp(logits / 2.0, axis=1)
    )


def test_aggregation() -> None:
    s = np.array([1.0, -2.0, 3.0, 4.0])
    assert aggregate(s) == 1.5
    assert aggregate(s, "min") == -2.0
    assert aggregate(s, "last_k", last_k=2) == 3.5
    assert aggregate(s, "last_k", last_k=10) == 1.5
    with pytest.raises(ValueError, match="no tokens"):
        aggregate(np.zeros(0))
    with pytest.raises(ValueError, match="unknown aggregation"):
        aggregate(s, "max")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-finite"):
        aggregate(np.array([1.0, np.nan]))


# ---------------------------------------------------------------- detectors
def test_detectors_interface() -> None:
    rng = np.random.default_rng(4)
    head = _random_head(rng, v=30, d=6)
    traces = [_trace(rng.normal(size=(int(rng.integers(1, 6)), 6)), head) for _ in range(5)]
    dets = [make_detector(s).fit(head) for s in DEFAULT_DETECTORS]
    for d in dets:
        conf = d.score_samples(traces)
        assert conf.shape == (5,) and np.all(np.isfinite(conf))
        assert np.array_equal(d.decision_function(traces), -conf)
    nci = make_detector("nci").fit(head)
    assert nci.score_one(traces[0]) == pytest.approx(nci_token_scores(traces[0], head).mean())
    mn = make_detector("fdbd@3", aggregation="min").fit(head)
    assert mn.score_one(traces[1]) == pytest.approx(fdbd_token_scores(traces[1], head, 3).min())
    assert set(score_all(dets, traces[2])) == set(DEFAULT_DETECTORS)


def test_make_detector_errors() -> None:
    with pytest.raises(ValueError, match="fdbd needs k"):
        make_detector("fdbd")
    with pytest.raises(ValueError, match="unknown detector 'knn'"):
        make_detector("knn")
    with pytest.raises(ValueError, match="bad detector spec"):
        make_detector("NCI!")
    with pytest.raises(RuntimeError, match="not fitted"):
        make_detector("nci").score_samples([_trace(np.ones(2), LMHead(W3))])


def test_trace_validation() -> None:
    with pytest.raises(ValueError, match="disagree on T"):
        TokenTrace(np.zeros((2, 3)), np.zeros((3, 5)), np.zeros(2, int))
    with pytest.raises(ValueError, match="outside the vocabulary"):
        TokenTrace(np.zeros((1, 3)), np.zeros((1, 5)), np.array([5]))


# ---------------------------------------------------------------- grey-box
def test_greybox_equals_whitebox_with_full_vocabulary() -> None:
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(4, 15)) * 2
    ids = rng.integers(0, 15, 4)
    tr = TokenTrace(rng.normal(size=(4, 3)), logits, ids)
    ls = log_softmax(logits, axis=1)
    got = greybox_token_scores(ls[np.arange(4), ids], ls)
    assert np.allclose(got["perplexity"], log_prob_token_scores(tr))
    assert np.allclose(got["msp"], max_prob_token_scores(tr))
    assert np.allclose(got["entropy"], neg_entropy_token_scores(tr))


def test_greybox_truncated_top_k() -> None:
    top = np.log(np.array([[0.5, 0.3, np.nan], [0.9, 0.05, 0.01]]))
    chosen = np.log([0.5, 0.05])
    got = greybox_token_scores(chosen, top)
    assert got["msp"] == pytest.approx([0.5, 0.9])
    assert got["entropy"][0] == pytest.approx(0.5 * np.log(0.5) + 0.3 * np.log(0.3))
    renorm = greybox_token_scores(chosen, top, renormalize=True)["entropy"][0]
    assert renorm == pytest.approx(-entropy([0.5 / 0.8, 0.3 / 0.8]))
    pooled = greybox_scores(chosen, top)
    assert pooled["perplexity"] == pytest.approx(np.mean(chosen))
    with pytest.raises(ValueError, match="≤ 0"):
        greybox_token_scores([0.0], [[0.5]])
    with pytest.raises(ValueError, match=r"\(T, k≥1\)"):
        greybox_token_scores([0.0, -1.0], [[0.0]])


def test_top_k_cache_serves_smaller_k_and_matches_brute_force() -> None:
    rng = np.random.default_rng(7)
    head = _random_head(rng, v=40, d=6)
    z = rng.normal(size=(5, 6))
    tr = _trace(z, head)
    big = tr.top_excluding_argmax(20)
    for t in range(5):
        order = [i for i in np.argsort(-tr.logits[t], kind="stable") if i != tr.logits[t].argmax()]
        assert list(big[t]) == order[:20]
    assert np.array_equal(tr.top_excluding_argmax(3), big[:, :3])
    # fDBD at a small k after a large k (cached) equals the brute force.
    assert np.allclose(fdbd_token_scores(tr, head, k=3), [_fdbd_brute(zt, head, 3) for zt in z])
    dets = [make_detector(s).fit(head) for s in ("fdbd@2", "fdbd@all", "nci")]
    tr2 = _trace(z, head)
    scores = score_all(dets, tr2)  # prefetches all V − 1 once
    assert tr2.top_excluding_argmax(39).shape == (5, 39)
    assert scores["fdbd@2"] == pytest.approx(np.mean([_fdbd_brute(zt, head, 2) for zt in z]))
    assert scores["fdbd@all"] == pytest.approx(np.mean([_fdbd_brute(zt, head, 39) for zt in z]))


# ---------------------------------------------------------------- precision, shared top-k, direction
def test_fdbd_float32_head_with_near_duplicate_rows_matches_float64() -> None:
    """Two rows 1e-5 apart: expanding ‖w_ĉ − w_c‖² and the margin cancels in float32 (the score
    was 0.540848); differences first give the float64 value 0.539298."""
    w = np.array(
        [[0.3, 0.2, -0.1, 0.4], [0.30001, 0.19999, -0.10001, 0.40001], [-0.2, 0.1, 0.3, 0.0]],
        dtype=np.float32,
    )
    z = np.array([[10.0, 5.0, -2.0, 8.0]], dtype=np.float32)
    head = LMHead(w)
    tr = TokenTrace(z, z @ w.T, (z @ w.T).argmax(axis=1))
    w64, z64 = w.astype(np.float64), z[0].astype(np.float64)
    logits = w64 @ z64
    c, runner_up = np.argsort(-logits)[:2]
    diff = w64[c] - w64[runner_up]
    want = abs(diff @ z64) / np.linalg.norm(diff) / np.linalg.norm(z64)
    assert want == pytest.approx(0.539298, abs=1e-6)
    assert fdbd_token_scores(tr, head, k=1)[0] == pytest.approx(want, rel=1e-9)
    # With a bias, against the brute force in float64 on the float32 values.
    b = np.array([0.01, -0.02, 0.0], dtype=np.float32)
    head_b = LMHead(w, b)
    lg = z @ w.T + b
    got = fdbd_token_scores(TokenTrace(z, lg, lg.argmax(axis=1)), head_b, k=2)[0]
    brute = _fdbd_brute(z64, LMHead(w64, b.astype(np.float64), head_b.neutral_point), 2)
    assert got == pytest.approx(brute, rel=1e-6)


def test_fdbd_detectors_set_top_k_and_share_one_computation(monkeypatch) -> None:
    import methods.ood._token_scores as token_scores
    import methods.ood._trace as trace_mod

    rng = np.random.default_rng(8)
    head = _random_head(rng, v=60, d=6)
    dets = [make_detector(s).fit(head) for s in ("fdbd@1", "fdbd@5", "fdbd@20", "nci")]
    assert [d.top_k for d in dets] == [1, 5, 20, 0]
    assert make_detector("fdbd@all").top_k == -1
    sorts: list[int] = []
    widths: list[int] = []
    real_sort, real_dist = trace_mod._sorted_top_excluding_argmax, token_scores._boundary_distances
    monkeypatch.setattr(
        trace_mod,
        "_sorted_top_excluding_argmax",
        lambda lg, k: sorts.append(k) or real_sort(lg, k),
    )
    monkeypatch.setattr(
        token_scores,
        "_boundary_distances",
        lambda tr, h, k: widths.append(k) or real_dist(tr, h, k),
    )
    z = rng.normal(size=(4, 6))
    scores = score_all(dets, _trace(z, head))
    assert sorts == [20] and widths == [20]  # once, at the largest k, for all three
    for k in (1, 5, 20):
        want = np.mean([_fdbd_brute(zt, head, k) for zt in z])
        assert scores[f"fdbd@{k}"] == pytest.approx(want)


def _confident_and_uncertain() -> tuple[LMHead, TokenTrace, TokenTrace]:
    """A 4-class head; one answer far from every boundary with peaked logits, one on the
    boundary between its top two classes with flat logits."""
    head = LMHead(np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]]))
    return (
        head,
        _trace(np.array([[10.0, 0.0]] * 3), head),
        _trace(np.array([[1.0, 0.99]] * 3), head),
    )


@pytest.mark.parametrize("spec", DEFAULT_DETECTORS)
def test_decision_function_is_higher_for_the_obvious_hallucination(spec: str) -> None:
    """PyOD's direction: decision_function higher = more likely hallucinated; score_samples is
    its negative (higher = more confident)."""
    head, confident, uncertain = _confident_and_uncertain()
    det = make_detector(spec).fit(head)
    hallucinated, sure = det.decision_function([uncertain, confident])
    assert hallucinated > sure
    assert np.array_equal(det.score_samples([uncertain, confident]), [-hallucinated, -sure])


def test_greybox_confidences_are_higher_for_the_obvious_right_answer() -> None:
    head, confident, uncertain = _confident_and_uncertain()
    conf = {}
    for name, tr in (("sure", confident), ("unsure", uncertain)):
        ls = log_softmax(tr.logits, axis=1)
        conf[name] = greybox_scores(ls[np.arange(3), tr.token_ids], ls)
    for det in ("perplexity", "msp", "entropy"):
        assert conf["sure"][det] > conf["unsure"][det]
