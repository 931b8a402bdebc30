"""d2lutil.translator, notebook 8's model that notebook 9 retrains: checked against
hand computations (a per-token loss loop, the schedule's formula, decoding step by
step), for determinism (the same seed, the same weights) and for its argument checks."""

import math

import pytest
import torch
from torch.nn import functional as F

import d2lutil
from d2lutil import pronunciations, translator

WORDS = ["cat", "attack", "tack", "act", "cattle", "tact"]


@pytest.fixture(scope="module")
def vocab():
    entries = {"cat": ("K", "AE", "T"), "attack": ("AH", "T", "AE", "K"),
               "tack": ("T", "AE", "K"), "act": ("AE", "K", "T"),
               "cattle": ("K", "AE", "T", "AH", "L"), "tact": ("T", "AE", "K", "T")}
    return entries, pronunciations.letter_vocab(), pronunciations.phoneme_vocab(entries)


def small_model(seed=0, num_phonemes=9, max_target_len=6):
    torch.manual_seed(seed)
    return translator.Translator(29, num_phonemes, 12, max_target_len, num_hiddens=16,
                                 num_heads=4, ffn_num_hiddens=32).eval()


def test_target_len_is_the_longest_pronunciation_plus_eos(vocab):
    entries, _, _ = vocab
    assert translator.target_len(entries) == 6
    with pytest.raises(ValueError, match="entries"):
        translator.target_len({})


def test_sequence_loss_is_the_mean_over_words_of_the_valid_tokens_mean():
    torch.manual_seed(1)
    logits, target = torch.randn(3, 5, 7), torch.randint(7, (3, 5))
    lens = torch.tensor([5, 2, 3])
    by_hand = []
    for b in range(3):
        tokens = [F.cross_entropy(logits[b, t:t + 1], target[b, t:t + 1])
                  for t in range(int(lens[b]))]
        by_hand.append(sum(tokens) / len(tokens))
    per_word = translator.sequence_loss(logits, target, lens, per_word=True)
    torch.testing.assert_close(per_word, torch.stack(by_hand))
    torch.testing.assert_close(translator.sequence_loss(logits, target, lens),
                               torch.stack(by_hand).mean())
    target[1, 2:] = 0  # padding beyond valid_lens does not count
    torch.testing.assert_close(translator.sequence_loss(logits, target, lens, True)[1],
                               by_hand[1])


@pytest.mark.parametrize("bad, match", [
    (dict(logits=torch.zeros(2, 5)), "logits must be 3-D"),
    (dict(target=torch.zeros(2, 5, 1, dtype=torch.long)), "target must be 2-D"),
    (dict(target=torch.zeros(2, 4, dtype=torch.long)), "must match target"),
    (dict(logits=[[0.0]]), "logits must be a torch.Tensor")])
def test_sequence_loss_names_a_bad_argument(bad, match):
    args = dict(logits=torch.zeros(2, 5, 7), target=torch.zeros(2, 5, dtype=torch.long),
                target_valid_lens=torch.tensor([5, 3]))
    args.update(bad)
    with pytest.raises((TypeError, ValueError), match=match):
        translator.sequence_loss(**args)


def test_the_schedule_rises_linearly_then_falls_to_zero():
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([parameter], lr=1.0)
    schedule = translator.warmup_then_decay(optimizer, warmup=4, num_steps=10)
    rates = []
    for _ in range(10):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        schedule.step()
    expected = [min((s + 1) / 4, (10 - s) / 6) for s in range(10)]
    assert rates == pytest.approx(expected)
    assert rates[3] == pytest.approx(1.0) and rates[-1] == pytest.approx(1 / 6)
    for warmup, num_steps, match in [(0, 10, "warmup"), (10, 10, "warmup must be below"),
                                     (2, 0, "num_steps")]:
        with pytest.raises(ValueError, match=match):
            translator.warmup_then_decay(optimizer, warmup, num_steps)


def test_decode_with_a_cache_step_by_step_equals_the_whole_prefix():
    model = small_model()
    source = torch.randint(3, 29, (2, 5))
    lens = torch.tensor([5, 3])
    tokens = torch.randint(3, 9, (2, 4))
    with torch.no_grad():
        memory = model.encoder(source)
        whole = model.decode(tokens, memory, lens)
        cache = d2lutil.KVCache()
        steps = [model.decode(tokens[:, t:t + 1], memory, lens, t, cache)
                 for t in range(4)]
    torch.testing.assert_close(torch.cat(steps, 1), whole, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(model(source, lens, tokens), whole)


def test_a_head_mask_of_ones_changes_nothing_and_zeros_change_the_scores():
    model = small_model()
    source, lens = torch.randint(3, 29, (2, 5)), torch.tensor([5, 4])
    tokens = torch.randint(3, 9, (2, 3))
    with torch.no_grad():
        plain = model(source, lens, tokens)
        ones = model(source, lens, tokens, head_mask=torch.ones(4))
        off = model(source, lens, tokens, head_mask=torch.tensor([0.0, 1, 1, 1]))
    torch.testing.assert_close(plain, ones)
    assert not torch.allclose(plain, off)


def test_greedy_decode_with_and_without_a_cache_agree_and_stop(vocab):
    _, letters, phonemes = vocab
    model = small_model(num_phonemes=len(phonemes))
    said, scores = translator.greedy_decode(model, WORDS, letters, phonemes)
    plain, plain_scores = translator.greedy_decode(model, WORDS, letters, phonemes,
                                                   use_cache=False)
    assert said == plain and len(said) == len(WORDS)
    torch.testing.assert_close(scores, plain_scores, rtol=1e-5, atol=1e-5)
    assert scores.shape[:2][0] == len(WORDS) and scores.shape[1] <= 6
    assert all(len(p) <= 6 and "<eos>" not in p for p in said)
    with pytest.raises(TypeError, match="model must be a Translator"):
        translator.greedy_decode(torch.nn.Linear(2, 2), WORDS, letters, phonemes)


def test_train_is_deterministic_and_lowers_the_loss(vocab):
    entries, letters, phonemes = vocab
    runs = [translator.train(WORDS, entries, letters, phonemes, seed=seed,
                             num_steps=40, batch_size=8, lr=0.02, warmup=5)
            for seed in (3, 3, 4)]
    (a, losses_a), (b, losses_b), (c, _) = runs
    assert losses_a == losses_b and len(losses_a) == 40
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q)
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), c.parameters(),
                                                       strict=True))
    assert not a.training
    assert sum(losses_a[-5:]) / 5 < sum(losses_a[:5]) / 5 < math.log(len(phonemes)) + 1
    seen = []
    translator.train(WORDS, entries, letters, phonemes, num_steps=6, batch_size=2,
                     warmup=2, progress=lambda steps: seen.append(steps) or steps)
    assert seen == [range(6)]


@pytest.mark.parametrize("bad, error, match", [
    (dict(words=[]), ValueError, "words must hold"),
    (dict(batch_size=0), ValueError, "batch_size"),
    (dict(seed=1.5), TypeError, "seed"),
    (dict(num_steps=0), ValueError, "num_steps")])
def test_train_names_a_bad_argument(vocab, bad, error, match):
    entries, letters, phonemes = vocab
    args = dict(words=WORDS, entries=entries, letters=letters, phonemes=phonemes,
                num_steps=3, warmup=1)
    args.update(bad)
    with pytest.raises(error, match=match):
        translator.train(**args)


def test_the_translator_names_a_bad_size():
    with pytest.raises(ValueError, match="max_target_len"):
        translator.Translator(29, 9, 12, 0)
    with pytest.raises(TypeError, match="num_letters"):
        translator.Translator(29.0, 9, 12, 6)
