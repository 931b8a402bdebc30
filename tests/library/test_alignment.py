"""Unit tests of d2lutil.alignment: letter embeddings, alignment weights, row regimes."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from d2lutil import alignment as al
from d2lutil import masked_softmax


def test_letter_embeddings_shape_seeded_and_isolated():
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    table = al.letter_embeddings(16, seed=3)
    after = torch.rand(1)
    assert table.shape == (26, 16) and table.dtype == torch.float32
    assert torch.equal(table, al.letter_embeddings(16, seed=3))
    assert not torch.equal(table, al.letter_embeddings(16, seed=4))
    assert torch.equal(before, after), "the global RNG must not be consumed"


def test_letter_embeddings_are_standard_normal():
    table = al.letter_embeddings(4000, seed=0)
    assert abs(float(table.mean())) < 0.01
    assert abs(float(table.std()) - 1.0) < 0.01


@pytest.mark.parametrize("d, error, text", [
    (0, ValueError, "d must be a positive int, got 0"),
    (-3, ValueError, "d must be a positive int"),
    (2.0, TypeError, "d must be a positive int, got float"),
    (True, TypeError, "d must be a positive int, got bool"),
])
def test_letter_embeddings_rejects_bad_d(d, error, text):
    with pytest.raises(error, match=text):
        al.letter_embeddings(d)


def test_letter_embeddings_rejects_bad_seed():
    with pytest.raises(TypeError, match="seed must be an int, got str"):
        al.letter_embeddings(8, seed="0")


def test_embed_word_picks_rows_case_insensitively():
    table = al.letter_embeddings(5, seed=1)
    emb = al.embed_word("Cab", table)
    assert emb.shape == (3, 5)
    assert torch.equal(emb[0], table[2]) and torch.equal(emb[1], table[0])
    assert torch.equal(emb[2], table[1])


@pytest.mark.parametrize("word, error, text", [
    ("", ValueError, "word must be a non-empty word"),
    ("ab1", ValueError, r"only the letters a-z, got 'ab1' \(bad: \['1'\]\)"),
    ("two words", ValueError, r"bad: \[' '\]"),
    ("café", ValueError, "only the letters a-z"),
    (42, TypeError, "word must be a str, got int"),
])
def test_embed_word_rejects_bad_words(word, error, text):
    with pytest.raises(error, match=text):
        al.embed_word(word, al.letter_embeddings(4))


def test_embed_word_rejects_bad_table():
    with pytest.raises(ValueError, match=r"table must have shape \(26, d\), got \(25, 4\)"):
        al.embed_word("a", torch.zeros(25, 4))
    with pytest.raises(TypeError, match="table must be a torch.Tensor, got list"):
        al.embed_word("a", [[0.0] * 4] * 26)


def test_alignment_weights_match_a_direct_computation():
    w = al.alignment_weights("cat", "tack", d=8, seed=2)
    table = al.letter_embeddings(8, seed=2)
    q, k = al.embed_word("cat", table), al.embed_word("tack", table)
    # (1, 3, 4): scores of a batch of one
    scores = (q @ k.T / math.sqrt(8))[None]
    assert w.shape == (3, 4)
    torch.testing.assert_close(w, masked_softmax(scores)[0])
    torch.testing.assert_close(w.sum(dim=1), torch.ones(3))


def test_identical_keys_get_identical_weights():
    w = al.alignment_weights("a", "abca", d=8, seed=0)
    torch.testing.assert_close(w[0, 0], w[0, 3], rtol=1e-6, atol=0.0)
    assert not torch.isclose(w[0, 0], w[0, 1])


def test_alignment_weights_names_the_bad_word():
    with pytest.raises(ValueError, match="query_word must be a non-empty word"):
        al.alignment_weights("", "abc")
    with pytest.raises(ValueError, match="key_word must contain only the letters a-z"):
        al.alignment_weights("abc", "a-b")
    with pytest.raises(ValueError, match="d must be a positive int"):
        al.alignment_weights("abc", "abc", d=0)


def test_row_stats_on_known_rows():
    weights = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0], [0.25] * 4])
    max_w, ent = row_stats = al.row_stats(weights)
    assert row_stats[0].dtype == torch.float64
    torch.testing.assert_close(max_w, torch.tensor([1.0, 0.5, 0.25], dtype=torch.float64))
    torch.testing.assert_close(
        ent, torch.tensor([0.0, math.log(2), math.log(4)], dtype=torch.float64))


def test_row_stats_rejects_bad_input():
    with pytest.raises(ValueError, match=r"weights must be 2-D \(num_queries, num_keys\)"):
        al.row_stats(torch.ones(3))
    with pytest.raises(ValueError, match="weights must be non-negative"):
        al.row_stats(torch.tensor([[1.5, -0.5]]))
    with pytest.raises(TypeError, match="weights must be a torch.Tensor, got list"):
        al.row_stats([[1.0]])


def test_uniform_entropy():
    assert al.uniform_entropy(11) == pytest.approx(2.3979, abs=1e-4)
    assert al.uniform_entropy(1) == 0.0
    with pytest.raises(ValueError, match="num_keys must be a positive int"):
        al.uniform_entropy(0)


def test_expected_regime_counts_copies():
    assert al.expected_regime("e", "translation") == "diffuse"
    assert al.expected_regime("i", "translation") == "sharp"
    assert al.expected_regime("T", "translation") == "split"
    assert al.expected_regime("a", "banana") == "split"
    with pytest.raises(ValueError, match="letter must be a single letter, got 'ab'"):
        al.expected_regime("ab", "abc")


@pytest.mark.parametrize("row, copies, regime", [
    ([0.85, 0.05, 0.05, 0.05], [0], "sharp"),
    ([0.79, 0.07, 0.07, 0.07], [0], "unclear"),
    ([0.05, 0.85, 0.05, 0.05], [0], "unclear"),  # the weight is on another letter
    ([0.3, 0.3, 0.2, 0.2], [0], "diffuse"),  # a partner that gets little weight
    ([0.45, 0.1, 0.45, 0.0], [0, 2], "split"),
    ([0.39, 0.2, 0.41, 0.0], [0, 2], "diffuse"),
    ([0.3, 0.3, 0.3, 0.1], [0, 1, 2], "split"),
    ([0.3, 0.3, 0.25, 0.15], [0, 1, 2], "diffuse"),
    ([0.4, 0.2, 0.2, 0.2], [], "diffuse"),
    ([0.6, 0.2, 0.2, 0.0], [], "unclear"),
])
def test_classify_row(row, copies, regime):
    assert al.classify_row(torch.tensor(row), copies) == regime


def test_classify_row_rejects_bad_input():
    with pytest.raises(ValueError, match=r"copies must be positions in \[0, 3\), got \[3\]"):
        al.classify_row(torch.ones(3) / 3, [3])
    with pytest.raises(TypeError, match="copies must be a list of int positions"):
        al.classify_row(torch.ones(3) / 3, [0.0])
    with pytest.raises(ValueError, match=r"row must be 1-D \(num_keys,\)"):
        al.classify_row(torch.ones(1, 3) / 3, [0])


def test_letter_table_on_a_hand_made_map():
    weights = torch.tensor([[0.9, 0.05, 0.05], [0.2, 0.4, 0.4], [0.2, 0.4, 0.4]])
    table = al.letter_table("abb", "abb", weights)
    assert [row["letter"] for row in table] == ["a", "b"]
    assert [row["copies"] for row in table] == [1, 2]
    assert [row["regime"] for row in table] == ["sharp", "split"]
    assert [row["expected"] for row in table] == ["sharp", "split"]
    assert table[0]["max_weight"] == pytest.approx(0.9)
    with pytest.raises(ValueError, match=r"weights must have shape \(3, 2\)"):
        al.letter_table("abc", "ab", weights)


def test_regimes_hold_at_large_d_not_at_tiny_d():
    assert al.regimes_hold("attention", "translation", d=256, seed=0)
    assert not al.regimes_hold("attention", "translation", d=1, seed=0)


def test_robustness_counts_grow_with_d():
    counts = al.robustness_counts("attention", "translation", [4, 64], range(5))
    assert set(counts) == {4, 64}
    assert counts[4] < counts[64]
    direct = sum(al.regimes_hold("attention", "translation", 64, seed) for seed in range(5))
    assert counts[64] == direct
    with pytest.raises(ValueError, match="seeds must hold at least one seed"):
        al.robustness_counts("ab", "ab", [8], [])
    with pytest.raises(ValueError, match="ds must hold at least one dimension d"):
        al.robustness_counts("ab", "ab", [], [0])


def test_alignment_weights_over_seeds_matches_one_seed_at_a_time():
    batched = al.alignment_weights_over_seeds("attention", "translation", 16, [3, 0, 7])
    assert batched.shape == (3, 9, 11)
    for i, seed in enumerate([3, 0, 7]):
        torch.testing.assert_close(batched[i], al.alignment_weights("attention", "translation",
                                                                    16, seed))
    assert not torch.allclose(batched[0], batched[1])
    with pytest.raises(ValueError, match="seeds must hold at least one seed"):
        al.alignment_weights_over_seeds("ab", "ab", 8, [])


def test_letter_table_statistics_agree_with_row_stats():
    weights = al.alignment_weights("attention", "translation", 16, 5)
    max_w, ent = al.row_stats(weights)
    for row in al.letter_table("attention", "translation", weights):
        i = "attention".index(row["letter"])
        assert row["max_weight"] == pytest.approx(float(max_w[i]), abs=1e-12)
        assert row["entropy"] == pytest.approx(float(ent[i]), abs=1e-9)
    with pytest.raises(ValueError, match="weights must be non-negative"):
        al.letter_table("ab", "ab", torch.tensor([[1.5, -0.5], [0.5, 0.5]]))


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)


@settings(max_examples=40, deadline=None)
@given(query_word=words, key_word=words, d=st.integers(1, 32), seed=st.integers(0, 1000))
def test_alignment_properties_on_random_words(query_word, key_word, d, seed):
    weights = al.alignment_weights(query_word, key_word, d, seed)
    assert weights.shape == (len(query_word), len(key_word))
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(len(query_word)))
    # identical letters give identical keys, hence the same weights up to float32
    # round-off (vectorized kernels may treat two equal columns differently by 1 ulp)
    for j, ch in enumerate(key_word):
        first = key_word.index(ch)
        torch.testing.assert_close(weights[:, j], weights[:, first], rtol=1e-6, atol=1e-9)
    table = al.letter_table(query_word, key_word, weights)
    assert [row["letter"] for row in table] == list(dict.fromkeys(query_word))
    for row in table:
        assert 0.0 <= row["entropy"] <= math.log(len(key_word)) + 1e-6
        assert row["regime"] in {"sharp", "split", "diffuse", "unclear"}
        assert row["copies"] == key_word.count(row["letter"])
