"""d2lutil.translator, notebook 8's model that notebook 9 retrains: checked against
hand computations (a per-token loss loop, the schedule's formula, decoding step by
step), for determinism (the same seed, the same weights) and for its argument checks."""

import json
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


def test_stop_after_runs_the_first_steps_of_the_same_run(vocab):
    """The first k steps of a run of num_steps, with its schedule and draws: the
    same losses, bit for bit, as the whole run's first k."""
    entries, letters, phonemes = vocab
    args = dict(seed=3, num_steps=12, batch_size=4, lr=0.02, warmup=1)
    _, whole = translator.train(WORDS, entries, letters, phonemes, **args)
    seen = []
    _, first = translator.train(WORDS, entries, letters, phonemes, stop_after=5,
                                progress=lambda steps: seen.append(steps) or steps, **args)
    assert first == whole[:5] and seen == [range(5)]
    # a run of 5 steps decays its rate sooner: from its third update on, other losses
    _, short = translator.train(WORDS, entries, letters, phonemes,
                                **(args | dict(num_steps=5)))
    assert short[:3] == whole[:3] and short != first


def test_train_draws_the_words_that_draws_gives_with_repeats(vocab, monkeypatch):
    entries, letters, phonemes = vocab
    fed, make_batch = [], pronunciations.make_batch
    monkeypatch.setattr(pronunciations, "make_batch", lambda words, *a: (
        fed.append(list(words)) or make_batch(words, *a)))
    translator.train(WORDS, entries, letters, phonemes, seed=2, num_steps=5,
                     batch_size=4, warmup=1)
    picks = translator.draws(len(WORDS), seed=2, num_steps=5, batch_size=4)
    assert picks.shape == (5, 4)
    assert fed == [[WORDS[i] for i in row] for row in picks.tolist()]
    many = translator.draws(1_000, seed=0, num_steps=100, batch_size=10)
    # 1,000 draws of 1,000 words with repeats: about 1 - 1/e of them are seen
    assert 0.58 < many.unique().numel() / 1_000 < 0.68
    assert not torch.equal(many, translator.draws(1_000, seed=1, num_steps=100,
                                                  batch_size=10))


@pytest.mark.parametrize("bad, match", [
    (dict(num_words=0), "num_words"), (dict(num_steps=-1), "num_steps"),
    (dict(batch_size=0), "batch_size")])
def test_draws_names_a_bad_argument(bad, match):
    args = dict(num_words=5, num_steps=2, batch_size=2) | bad
    with pytest.raises(ValueError, match=match):
        translator.draws(**args)


@pytest.mark.parametrize("bad, error, match", [
    (dict(words=[]), ValueError, "words must hold"),
    (dict(batch_size=0), ValueError, "batch_size"),
    (dict(seed=1.5), TypeError, "seed"),
    (dict(num_steps=0), ValueError, "num_steps"),
    (dict(stop_after=0), ValueError, "stop_after must be a positive int"),
    (dict(stop_after=2.0), TypeError, "stop_after must be a positive int"),
    (dict(stop_after=4), ValueError, r"stop_after must be at most num_steps \(3\), got 4")])
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


# The head lab's helpers: head_list and pronounce.

@pytest.mark.parametrize("heads_off, expected", [
    (2, [2]), ((), []), ([3, 0, 3], [0, 3]), (range(2), [0, 1]), ((1,), [1]),
    (torch.tensor(2).item(), [2])])
def test_head_list_takes_an_int_or_a_sequence(heads_off, expected):
    assert translator.head_list(heads_off, 4) == expected


@pytest.mark.parametrize("heads_off, error, match", [
    ("2", TypeError, "heads_off must be an int or a sequence of ints, got str"),
    (1.5, TypeError, "heads_off must be an int or a sequence of ints, got float"),
    (True, TypeError, "heads_off must be an int or a sequence of ints, got bool"),
    ([0, 1.0], TypeError, "heads_off must hold ints, got float"),
    ([4], ValueError, r"heads_off must be heads 0 to 3, got \[4\]"),
    (-1, ValueError, r"heads_off must be heads 0 to 3, got \[-1\]")])
def test_head_list_names_a_bad_heads_off(heads_off, error, match):
    with pytest.raises(error, match=match):
        translator.head_list(heads_off, 4)


def test_pronounce_gives_the_decoded_phonemes_and_their_teacher_forced_maps(vocab):
    _, letters, phonemes = vocab
    model = small_model(num_phonemes=len(phonemes))
    for word, heads_off in (("tack", ()), ("cattle", 1), ("act", [0, 3])):
        lab = translator.pronounce(model, word, letters, phonemes, heads_off)
        mask = torch.ones(4)
        mask[translator.head_list(heads_off, 4)] = 0.0
        (said,), scores = translator.greedy_decode(model, [word], letters, phonemes,
                                                   head_mask=mask)
        assert lab.said == said and lab.heads_off == translator.head_list(heads_off, 4)
        ids = scores[0].argmax(-1).tolist()
        assert lab.cut == (phonemes.eos not in ids)
        rows = ids if lab.cut else ids[:ids.index(phonemes.eos) + 1]
        assert lab.rows == [phonemes.tokens[i] for i in rows]
        # the maps: the model run on <bos> and the tokens it chose, the same mask
        source, lens = pronunciations.encode_words([word], letters)
        with torch.no_grad():
            model(source, lens, torch.tensor([[phonemes.bos, *rows[:-1]]]), head_mask=mask)
        torch.testing.assert_close(lab.weights,
                                   model.decoder.cross_attention.attention_weights[0])
        assert lab.weights.shape == (4, len(rows), len(word))


def test_pronounce_marks_a_pronunciation_cut_at_the_longest_target(vocab):
    _, letters, phonemes = vocab
    model = small_model(num_phonemes=len(phonemes))  # at most 6 tokens
    with torch.no_grad():
        model.output.bias[phonemes.index["K"]] = 100.0  # always K: never <eos>
    lab = translator.pronounce(model, "cattle", letters, phonemes)
    assert lab.cut and lab.said == ["K"] * 6 and lab.rows == ["K"] * 6
    assert lab.weights.shape == (4, 6, 6)  # 6 rows: no <eos> row, no 7th position
    with torch.no_grad():
        model.output.bias[phonemes.eos] = 200.0  # <eos> at once
    lab = translator.pronounce(model, "cattle", letters, phonemes)
    assert not lab.cut and lab.said == [] and lab.rows == ["<eos>"]


def test_pronounce_names_a_bad_argument(vocab):
    _, letters, phonemes = vocab
    model = small_model(num_phonemes=len(phonemes))
    for word, error, match in [(3, TypeError, "word must be a str, got int"),
                               (["cat"], TypeError, "word must be a str, got list"),
                               ("Cat", ValueError, "words must be 3 to 12 lower-case")]:
        with pytest.raises(error, match=match):
            translator.pronounce(model, word, letters, phonemes)
    with pytest.raises(ValueError, match="heads_off must be heads 0 to 3"):
        translator.pronounce(model, "cat", letters, phonemes, heads_off=[4])
    with pytest.raises(TypeError, match="model must be a Translator"):
        translator.pronounce(torch.nn.Linear(2, 2), "cat", letters, phonemes)


# trained: shipped weights, or a model trained here.

def ship(folder, vocab, seeds, words=WORDS):
    """A folder of weights as make_weights writes it, for the small vocabularies: each
    seed's 'model' is a random Translator of the shape trained() builds."""
    entries, letters, phonemes = vocab
    records = {}
    for seed in seeds:
        torch.manual_seed(100 + seed)
        model = translator.Translator(len(letters), len(phonemes),
                                      pronunciations.MAX_LETTERS, translator.target_len(entries))
        torch.save(model.state_dict(), folder / f"seed_{seed}.pt")
        records[str(seed)] = {"file": f"seed_{seed}.pt", "fingerprint": translator.fingerprint(
            words, entries, letters, phonemes), "losses": [3.5 - seed, 2.0]}
    made_by = {"torch": "9.9", "capability": "TEST"}
    (folder / "weights.json").write_text(json.dumps({
        "made_by": made_by, "training": {"num_steps": 12}, "seeds": records}))
    return {seed: torch.load(folder / f"seed_{seed}.pt") for seed in seeds}


@pytest.fixture
def no_training(monkeypatch):
    """translator.train replaced: it records its seed and returns a sentinel."""
    calls = []

    def fake_train(words, entries, letters, phonemes, seed=0, **kwargs):
        calls.append(seed)
        return "trained here", [0.0] * 7

    monkeypatch.setattr(translator, "train", fake_train)
    return calls


def test_trained_loads_the_shipped_weights_of_its_seed(tmp_path, vocab, no_training,
                                                       monkeypatch):
    entries, letters, phonemes = vocab
    states = ship(tmp_path, vocab, [0, 3])
    loads = []
    real_load = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: loads.append(k) or real_load(*a, **k))
    for seed in (0, 3):
        model, made_by = translator.trained(WORDS, entries, letters, phonemes, seed=seed,
                                            folder=tmp_path)
        assert made_by == {"seed": seed, "shipped": True, "num_steps": 12, "torch": "9.9",
                           "capability": "TEST", "losses": [3.5 - seed, 2.0]}
        assert not model.training
        for name, value in model.state_dict().items():
            assert torch.equal(value, states[seed][name]), name
    assert no_training == [] and loads == [{"weights_only": True}] * 2


def test_trained_trains_a_seed_or_data_it_has_no_weights_for(tmp_path, vocab, no_training):
    entries, letters, phonemes = vocab
    ship(tmp_path, vocab, [0])
    assert translator.trained(WORDS, entries, letters, phonemes, seed=1,
                              folder=tmp_path) == ("trained here", {"seed": 1, "shipped": False,
                                                                    "num_steps": 7,
                                                                    "losses": [0.0] * 7})
    other_words = WORDS[:-1]  # other data, shipped seed: trained too
    assert translator.trained(other_words, entries, letters, phonemes, seed=0,
                              folder=tmp_path)[0] == "trained here"
    assert translator.trained(WORDS, entries, letters, phonemes,
                              folder=tmp_path / "none")[0] == "trained here"
    assert no_training == [1, 0, 0]
    with pytest.raises(TypeError, match="seed must be an int"):
        translator.trained(WORDS, entries, letters, phonemes, seed="0", folder=tmp_path)


def test_trained_reads_its_seed_as_a_shifted_program_does(tmp_path, vocab, no_training):
    """Every seed shifted by K: seed 0 means the shipped seed K, or training at seed 0
    (which the shift makes K inside train) when K is not shipped."""
    import seedshift

    entries, letters, phonemes = vocab
    states = ship(tmp_path, vocab, [0, 3])
    try:
        seedshift.install(3)
        model, made_by = translator.trained(WORDS, entries, letters, phonemes, seed=0,
                                            folder=tmp_path)
        assert made_by["seed"] == 3 and made_by["shipped"]
        assert all(torch.equal(v, states[3][k]) for k, v in model.state_dict().items())
        seedshift.install(6)
        _, made_by = translator.trained(WORDS, entries, letters, phonemes, seed=0,
                                        folder=tmp_path)
        assert made_by["seed"] == 6 and not made_by["shipped"] and no_training == [0]
    finally:
        seedshift.uninstall()


def test_the_fingerprint_changes_with_the_data(vocab):
    entries, letters, phonemes = vocab
    base = translator.fingerprint(WORDS, entries, letters, phonemes)
    assert base == translator.fingerprint(list(WORDS), dict(entries), letters, phonemes)
    changed = {**entries, "cat": ("K", "AE", "D")}
    assert len({base, translator.fingerprint(WORDS[1:], entries, letters, phonemes),
                translator.fingerprint(WORDS, changed, letters, phonemes),
                translator.fingerprint(WORDS, entries, letters,
                                       pronunciations.phoneme_vocab(changed))}) == 4


def test_machine_names_what_decides_the_bits():
    here = translator.machine()
    assert tuple(here) == translator.MACHINE_FIELDS
    assert all(isinstance(value, str) and value for value in here.values())
    assert here["torch"] == torch.__version__
    assert here["capability"] == torch.backends.cpu.get_cpu_capability()


@pytest.mark.parametrize("change", [None, "cpu", "blas", "onednn", "torch", "capability"])
def test_made_here_needs_every_field_equal(change):
    record = translator.machine()
    if change:
        record[change] = "another"
    assert translator.made_here(record) is (change is None)
    if change:  # a field missing is another machine too, as in weights recorded before it
        del record[change]
        assert not translator.made_here(record)


def test_made_on_names_only_what_was_recorded():
    old = {"torch": "2.14.1", "capability": "AVX512"}
    assert translator.made_on(old) == "torch 2.14.1 on a CPU with AVX512 instructions"
    new = {**old, "cpu": "GenuineIntel Xeon, family 6, model 143", "blas": "mkl 2024.2",
           "onednn": "v3.12.0"}
    assert translator.made_on(new) == (
        "torch 2.14.1 on a CPU with AVX512 instructions (GenuineIntel Xeon, family 6, "
        "model 143; BLAS mkl 2024.2, oneDNN v3.12.0)")


def test_make_weights_keeps_other_seeds_only_if_this_machine_made_them(tmp_path, monkeypatch):
    """make_weights records machine() and keeps the seeds it lists only when made_here
    says so; training is replaced by a small model, so only the bookkeeping runs."""
    monkeypatch.setattr(translator, "train", lambda *a, seed=0, **kw: (
        torch.nn.Linear(2, 1), [3.0 - seed, 1.0]))
    path = translator.make_weights([0], tmp_path)
    translator.make_weights([1], tmp_path)
    manifest = json.loads(path.read_text())
    assert manifest["made_by"] == translator.machine()
    assert list(manifest["seeds"]) == ["0", "1"]
    assert manifest["seeds"]["1"]["losses"] == [2.0, 1.0]
    manifest["made_by"]["cpu"] = "another CPU"  # as if made elsewhere
    path.write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=r"lists seeds 0, 1, made on another machine \("
                                         r"torch .*\(another CPU; .*remake every seed "
                                         r"together: seeds 0 1 2$"):
        translator.make_weights([2], tmp_path)
    assert json.loads(path.read_text()) == manifest  # nothing written
    translator.make_weights([1, 0, 2], tmp_path)
    manifest = json.loads(path.read_text())
    assert list(manifest["seeds"]) == ["0", "1", "2"] and translator.made_here(
        manifest["made_by"])
