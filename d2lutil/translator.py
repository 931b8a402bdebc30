"""Notebook 8's translator from spelling to sound, whose heads notebook 9 reads.

Notebook 8 builds it, prints this code where it teaches it and runs the first
steps of its training; notebooks 8 and 9 load the weights that the whole run gave
on the machine that made the chapter (``trained``: shipped in
``d2lutil/weights/`` for seeds 0 to 5, with every step's loss), and notebook 9
reads its heads. The pieces:

* ``Encoder``: letter plus position embeddings, normalized (no self-attention);
* ``DecoderLayer``: causal self-attention (with a ``KVCache`` when decoding),
  cross-attention over the letters (with a ``head_mask``) and a feed-forward
  network, each after a LayerNorm and added back (pre-norm residuals);
* ``Translator``: the encoder, phoneme and position embeddings, one decoder
  layer and a linear readout over the phonemes;
* ``sequence_loss``, ``warmup_then_decay``, ``train_step``, ``draws`` and
  ``train``: the masked cross-entropy, the learning-rate schedule, one step,
  the words each step draws and the training loop;
* ``greedy_decode``: pronounce words, with or without a cache;
* ``target_len``: the longest pronunciation of a dictionary, plus ``<eos>``;
* ``trained``: notebook 8's trained model for a seed, loaded from the weights
  shipped in ``d2lutil/weights/`` (made by ``make_weights``, the command
  ``python tools/make_weights.py``) or, for a seed or data they were not made
  from, trained here with ``train``;
* ``shipped``: a shipped model read by its file's name, with the test words
  it was not trained on (the same whatever seeds a program shifts);
* ``head_list`` and ``pronounce``: the argument checks and the decoding
  behind notebook 9's head lab; ``head_values`` and ``value_weighted``: what
  each head's letters add to the output, and the lab's maps weighted by it.

Every tensor the code makes itself is made on its inputs' device.
"""

import hashlib
import json
import numbers
import pathlib
import platform
import re
from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from . import pronunciations
from .attention import KVCache, MultiHeadAttention
from .shapes import check_positive_int, check_seed
from .tasks import one_thread

__all__ = ["DecoderLayer", "Encoder", "Pronounced", "Translator", "draws", "fingerprint",
           "greedy_decode", "head_list", "head_values", "machine", "made_here", "made_on",
           "make_weights", "pronounce", "sequence_loss", "shipped", "target_len", "train",
           "train_step", "trained", "value_weighted", "warmup_then_decay"]

#: The folder of the shipped weights: ``seed_<n>.pt`` and ``weights.json``.
WEIGHTS = pathlib.Path(__file__).resolve().with_name("weights")
#: The seeds whose trained weights ship with d2lutil.
SHIPPED_SEEDS = tuple(range(6))
#: Notebook 8's data split and training arguments (``train``'s defaults).
NUM_TEST = 2_000
TRAINING = {"num_steps": 700, "batch_size": 128, "lr": 0.02, "warmup": 50}


def _check_tensor(name, value, ndim):
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got "
                        f"{type(value).__name__}")
    if value.dim() != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape "
                         f"{tuple(value.shape)}")


class Encoder(nn.Module):
    """Letter embeddings plus learned position embeddings, normalized."""
    def __init__(self, vocab_size, num_hiddens, max_len):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.position = nn.Embedding(max_len, num_hiddens)
        self.norm = nn.LayerNorm(num_hiddens)

    def forward(self, source):  # (batch_size, num_letters)
        positions = torch.arange(source.shape[1], device=source.device)
        # (batch_size, num_letters, num_hiddens)
        return self.norm(self.embedding(source) + self.position(positions))


class DecoderLayer(nn.Module):
    """Causal self-attention, cross-attention and a feed-forward network."""
    def __init__(self, num_hiddens, num_heads, ffn_num_hiddens):
        super().__init__()
        d = num_hiddens
        self.norms = nn.ModuleList([nn.LayerNorm(d) for _ in range(3)])
        self.self_attention = MultiHeadAttention(
            d, num_heads, query_size=d, key_size=d, value_size=d)
        self.cross_attention = MultiHeadAttention(
            d, num_heads, query_size=d, key_size=d, value_size=d)
        self.ffn = nn.Sequential(nn.Linear(d, ffn_num_hiddens), nn.ReLU(),
                                 nn.Linear(ffn_num_hiddens, d))

    def forward(self, X, memory, source_valid_lens, causal_lens, cache=None,
                head_mask=None):
        """X: (batch_size, T, num_hiddens); memory: (batch_size, S, d)."""
        Y = self.norms[0](X)
        X = X + self.self_attention(Y, Y, Y, causal_lens, cache=cache)
        Y = self.norms[1](X)
        X = X + self.cross_attention(Y, memory, memory, source_valid_lens,
                                     head_mask=head_mask)
        return X + self.ffn(self.norms[2](X))


class Translator(nn.Module):
    """Letters in, next-phoneme scores out: an encoder and one decoder layer.

    ``max_target_len`` is the longest target with ``<eos>`` (``target_len``);
    greedy decoding stops after that many steps at the latest.
    """
    def __init__(self, num_letters, num_phonemes, max_source_len,
                 max_target_len, num_hiddens=64, num_heads=4,
                 ffn_num_hiddens=256):
        super().__init__()
        for name, value in (("num_letters", num_letters),
                            ("num_phonemes", num_phonemes),
                            ("max_source_len", max_source_len),
                            ("max_target_len", max_target_len),
                            ("ffn_num_hiddens", ffn_num_hiddens)):
            check_positive_int(name, value)
        self.encoder = Encoder(num_letters, num_hiddens, max_source_len)
        self.embedding = nn.Embedding(num_phonemes, num_hiddens)
        self.position = nn.Embedding(max_target_len, num_hiddens)
        self.decoder = DecoderLayer(num_hiddens, num_heads, ffn_num_hiddens)
        self.norm = nn.LayerNorm(num_hiddens)
        self.output = nn.Linear(num_hiddens, num_phonemes)

    def forward(self, source, source_valid_lens, decoder_input,
                head_mask=None):  # memory: (batch_size, S, num_hiddens)
        return self.decode(decoder_input, self.encoder(source),
                           source_valid_lens, head_mask=head_mask)

    def decode(self, tokens, memory, source_valid_lens, start=0, cache=None,
               head_mask=None):
        """Next-phoneme scores for tokens (batch_size, T) at positions start,
        ...: (batch_size, T, num_phonemes)."""
        positions = torch.arange(start, start + tokens.shape[1],
                                 device=tokens.device)
        X = self.embedding(tokens) + self.position(positions)
        causal_lens = (positions + 1).expand(tokens.shape[0], -1)  # (batch, T)
        X = self.decoder(X, memory, source_valid_lens, causal_lens, cache,
                         head_mask)
        return self.output(self.norm(X))


def target_len(entries):
    """The longest pronunciation in entries (word -> phonemes), plus <eos>."""
    if not entries:
        raise ValueError("entries must hold at least one word")
    return max(map(len, entries.values())) + 1


def sequence_loss(logits, target, target_valid_lens, per_word=False):
    """Mean cross-entropy per word over its valid tokens; then over words."""
    _check_tensor("logits", logits, 3)
    _check_tensor("target", target, 2)
    if logits.shape[:2] != target.shape:
        raise ValueError(f"logits (batch_size, T, vocab) must match target "
                         f"(batch_size, T), got {tuple(logits.shape)} and "
                         f"{tuple(target.shape)}")
    # (batch_size, T): True for the tokens of each target, <eos> included
    mask = (torch.arange(target.shape[1], device=target.device)
            < target_valid_lens[:, None])
    # cross_entropy wants the classes on axis 1: (batch_size, vocab, T)
    losses = F.cross_entropy(logits.transpose(1, 2), target,
                             reduction="none")
    per_word_loss = (losses * mask).sum(dim=1) / target_valid_lens
    return per_word_loss if per_word else per_word_loss.mean()


def warmup_then_decay(optimizer, warmup, num_steps):
    """Learning rate factor: linear up over warmup steps, then down to 0."""
    check_positive_int("warmup", warmup)
    check_positive_int("num_steps", num_steps)
    if warmup >= num_steps:
        raise ValueError(f"warmup must be below num_steps ({num_steps}), "
                         f"got {warmup}")
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(
        (step + 1) / warmup, (num_steps - step) / (num_steps - warmup)))


def train_step(model, optimizer, schedule, batch):
    """One step on a batch of make_batch; the loss before the step."""
    loss = sequence_loss(model(batch["source"], batch["source_valid_lens"],
                               batch["decoder_input"]),
                         batch["target"], batch["target_valid_lens"])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    schedule.step()
    return loss.item()


def train(words, entries, letters, phonemes, seed=0, num_steps=700,
          batch_size=128, lr=0.02, warmup=50, progress=None, stop_after=None):
    """A Translator trained on batches drawn from words, and its losses.

    ``progress`` wraps the range of steps (a progress bar), if given;
    ``stop_after`` ends the run after its first ``stop_after`` steps.
    """
    check_seed(seed)
    check_positive_int("batch_size", batch_size)
    if not words:
        raise ValueError("words must hold at least one training word")
    check_positive_int("num_steps", num_steps)
    stop_after = num_steps if stop_after is None else stop_after
    check_positive_int("stop_after", stop_after)
    if stop_after > num_steps:
        raise ValueError(f"stop_after must be at most num_steps "
                         f"({num_steps}), got {stop_after}")
    torch.manual_seed(seed)  # the initial parameters
    model = Translator(len(letters), len(phonemes),
                       pronunciations.MAX_LETTERS, target_len(entries))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    schedule = warmup_then_decay(optimizer, warmup, num_steps)
    picks = draws(len(words), seed, num_steps, batch_size)  # which words
    losses = []
    steps = range(stop_after) if progress is None else progress(
        range(stop_after))
    for step in steps:
        batch = pronunciations.make_batch(
            [words[i] for i in picks[step].tolist()], entries, letters,
            phonemes)
        losses.append(train_step(model, optimizer, schedule, batch))
    return model.eval(), losses


def draws(num_words, seed=0, num_steps=700, batch_size=128):
    """The words ``train`` draws, by index: (num_steps, batch_size), each
    step's uniformly from num_words with repeats (a generator seeded with
    seed), so some words come twice and others never."""
    check_positive_int("num_words", num_words)
    check_positive_int("num_steps", num_steps)
    check_positive_int("batch_size", batch_size)
    generator = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randint(num_words, (batch_size,),
                                      generator=generator)
                        for _ in range(num_steps)])


@torch.no_grad()
def greedy_decode(model, words, letters, phonemes, use_cache=True,
                  head_mask=None):
    """Phoneme lists for words, and the scores of every step."""
    if not isinstance(model, Translator):
        raise TypeError(f"model must be a Translator, got "
                        f"{type(model).__name__}")
    source, source_valid_lens = pronunciations.encode_words(words, letters)
    memory = model.encoder(source)  # (batch_size, S, num_hiddens)
    tokens = torch.full((len(words), 1), phonemes.bos, device=source.device)
    cache, scores = KVCache() if use_cache else None, []
    for t in range(model.position.num_embeddings):  # the longest target
        new = tokens[:, t:] if use_cache else tokens  # cached: the newest
        logits = model.decode(new, memory, source_valid_lens, t if use_cache
                              else 0, cache, head_mask)[:, -1:]
        scores.append(logits)  # (batch_size, 1, num_phonemes)
        tokens = torch.cat([tokens, logits.argmax(dim=-1)], dim=1)
        if (tokens == phonemes.eos).any(dim=1).all():
            break
    return [phonemes.decode(row[1:]) for row in tokens], torch.cat(scores, 1)


def fingerprint(words, entries, letters, phonemes):
    """A short hash of what ``train`` learns from: the training words with
    their phonemes, both vocabularies and the longest target."""
    digest = hashlib.sha256()
    for word in words:
        digest.update(f"{word} {' '.join(entries[word])}\n".encode())
    digest.update(" ".join(letters.tokens).encode() + b"\n")
    digest.update(" ".join(phonemes.tokens).encode() + b"\n")
    digest.update(str(target_len(entries)).encode())
    return digest.hexdigest()[:16]


#: What decides the last bits of a training run on the CPU, as ``machine`` reads it.
MACHINE_FIELDS = ("torch", "capability", "cpu", "blas", "onednn")


def _cpu_name():
    """The CPU's vendor, model name, family and model number (``/proc/cpuinfo``
    on Linux; ``platform.processor()`` elsewhere)."""
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    first = dict(re.findall(r"^(vendor_id|model name|cpu family|model)\s*:\s*(.*)$",
                            text.split("\n\n")[0], flags=re.M))
    if "model name" not in first:  # e.g. an ARM CPU: its implementer and part
        return platform.processor() or platform.machine()
    return (f"{first.get('vendor_id', '?')} {first['model name']}, "
            f"family {first.get('cpu family', '?')}, model {first.get('model', '?')}")


def machine():
    """What decides the bits of a training run on the CPU, as a dict of strings:
    the ``torch`` version, ATen's CPU ``capability``, the ``cpu`` (vendor, model
    name, family, model) and the ``blas`` and ``onednn`` libraries torch reports.

    The same torch and capability are not enough: MKL and oneDNN choose their
    kernels by the CPU's vendor and model, so two AVX-512 CPUs can round apart.
    """
    config = torch.__config__.show()
    mkl = re.search(r"Math Kernel Library Version (.+?)(?: for |\n)", config)
    blas = re.search(r"BLAS_INFO=(\w+)", config)
    onednn = re.search(r"MKL-DNN (v[\d.]+)|oneDNN (v[\d.]+)", config)
    return {"torch": torch.__version__,
            "capability": torch.backends.cpu.get_cpu_capability(),
            "cpu": _cpu_name(),
            "blas": " ".join(filter(None, [blas and blas[1], mkl and mkl[1]])) or "none",
            "onednn": next(filter(None, onednn.groups())) if onednn else "none"}


def made_here(made_by):
    """True if ``made_by`` (a record of ``machine()``) names this machine in every
    field of ``MACHINE_FIELDS``: only then does training here give the same bits.
    A missing field means another machine."""
    here = machine()
    return all(field in made_by and made_by[field] == here[field]
               for field in MACHINE_FIELDS)


def made_on(made_by):
    """A record of ``machine()`` in words, naming only the fields it holds."""
    words = f"torch {made_by['torch']} on a CPU with {made_by['capability']} instructions"
    if "cpu" in made_by:
        words += f" ({made_by['cpu']}; BLAS {made_by.get('blas', '?')}, " \
                 f"oneDNN {made_by.get('onednn', '?')})"
    return words


def _manifest(folder=WEIGHTS):
    path = pathlib.Path(folder) / "weights.json"
    return json.loads(path.read_text()) if path.is_file() else {"seeds": {}}


def trained(words, entries, letters, phonemes, seed=0, folder=WEIGHTS):
    """Notebook 8's model, ``train(words, entries, letters, phonemes, seed)``:
    the shipped weights if they were made from these data at this seed,
    otherwise trained here (on one thread, as notebook 8 does).

    The seed is read as a program's own seeding calls see it
    (``torch.Generator().manual_seed(seed).initial_seed()``), so a program
    whose seeds are all shifted gets the model of the shifted seed. Returns
    the model (in eval mode) and a dict: ``seed``, ``shipped`` (True if
    loaded), ``num_steps`` (of training), ``losses`` (the training loss of
    every step, as ``train`` returns them), and for shipped weights what
    ``machine()`` recorded of the machine that made them (weights shipped
    before it was recorded name only ``torch`` and ``capability``).
    """
    check_seed(seed)
    effective = torch.Generator().manual_seed(seed).initial_seed()
    manifest = _manifest(folder)
    record = manifest["seeds"].get(str(effective))
    if record is not None and record["fingerprint"] == fingerprint(
            words, entries, letters, phonemes):
        model = Translator(len(letters), len(phonemes),
                           pronunciations.MAX_LETTERS, target_len(entries))
        state = torch.load(pathlib.Path(folder) / record["file"],
                           weights_only=True)
        model.load_state_dict(state)
        return model.eval(), {
            "seed": effective, "shipped": True,
            "num_steps": manifest["training"]["num_steps"],
            "losses": record["losses"], **manifest["made_by"]}
    with one_thread():  # small tensors: one thread is faster than two
        model, losses = train(words, entries, letters, phonemes, seed=seed)
    return model, {"seed": effective, "shipped": False, "num_steps": len(losses),
                   "losses": losses}


def shipped(seed, entries, letters, phonemes, folder=WEIGHTS):
    """The shipped model of ``seed`` read by its file's name, ``seed_<seed>.pt``,
    and the test words of its split: ``(model, test_words)``.

    Unlike ``trained``, the seed is taken as given, never through a program's
    seeding calls, so a table over the shipped seeds is the same whatever seeds
    the program shifts. ``entries``, ``letters`` and ``phonemes`` are notebook
    8's (the dictionary's first pronunciations and both vocabularies); every
    test word must be in ``entries``.
    """
    check_seed(seed)
    records = _manifest(folder)["seeds"]
    if str(seed) not in records:
        raise ValueError(f"seed must be a shipped seed ({', '.join(records)}), got {seed}")
    record = records[str(seed)]
    test_words = record["test_words"].split()
    missing = [word for word in test_words if word not in entries]
    if missing:
        raise ValueError(f"entries must hold the test words of seed {seed}; it lacks "
                         f"{len(missing)}, e.g. {missing[0]!r}")
    model = Translator(len(letters), len(phonemes), pronunciations.MAX_LETTERS,
                       target_len(entries))
    model.load_state_dict(torch.load(pathlib.Path(folder) / record["file"],
                                     weights_only=True))
    return model.eval(), test_words


def make_weights(seeds=SHIPPED_SEEDS, folder=WEIGHTS):
    """Train notebook 8's model for each seed and save it in folder.

    For seed s this is notebook 8 with every seed s: the CMU dictionary's
    first pronunciations, ``split_words(entries, NUM_TEST, seed=s)`` and
    ``train(train_words, entries, letters, phonemes, seed=s)`` on one thread.
    Writes ``seed_<s>.pt`` (the float32 state dict) and ``weights.json``
    (each file's seed, data ``fingerprint``, test words and training losses,
    and ``machine()`` as ``made_by``; the other seeds it lists are kept if
    ``made_here`` says this machine made them, and otherwise ``ValueError``
    asks for every seed, since a model trained elsewhere differs in its last
    bits). Returns the path of ``weights.json``.
    """
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    every = pronunciations.load_dictionary(all_pronunciations=True)
    entries = {word: options[0] for word, options in every.items()}
    letters = pronunciations.letter_vocab()
    phonemes = pronunciations.phoneme_vocab(entries)
    made_by = machine()
    for seed in seeds:
        check_seed(seed)
    before = _manifest(folder)  # its other seeds are kept if made alike
    records = before["seeds"] if made_here(before.get("made_by", {})) else {}
    others = sorted(set(before["seeds"]) - {str(seed) for seed in seeds}, key=int)
    if others and not records:
        raise ValueError(
            f"{folder / 'weights.json'} lists seeds {', '.join(others)}, made on another "
            f"machine ({made_on(before['made_by'])}); a model trained here differs in its "
            f"last bits, so remake every seed together: seeds "
            f"{' '.join(sorted({*others, *map(str, seeds)}, key=int))}")
    for seed in seeds:
        words, test_words, _ = pronunciations.split_words(entries, NUM_TEST, seed=seed)
        with one_thread():
            model, losses = train(words, entries, letters, phonemes, seed=seed,
                                  **TRAINING)
        name = f"seed_{seed}.pt"
        torch.save({k: v.detach().clone() for k, v in model.state_dict().items()},
                   folder / name)
        records[str(seed)] = {"file": name, "fingerprint": fingerprint(
            words, entries, letters, phonemes), "test_words": " ".join(test_words),
            # every step's loss, to 5 decimals (notebook 8 prints them to 1)
            "losses": [round(loss, 5) for loss in losses]}
    records = dict(sorted(records.items(), key=lambda item: int(item[0])))
    manifest = {"made_by": made_by, "command": "python tools/make_weights.py",
                "num_test": NUM_TEST, "training": TRAINING, "seeds": records}
    path = folder / "weights.json"
    path.write_text(json.dumps(manifest, indent=1) + "\n")
    return path


def head_list(heads_off, num_heads):
    """``heads_off`` (an int or a sequence of ints, each a head 0 to
    ``num_heads - 1``) as a sorted list without repeats; an error naming
    ``heads_off`` otherwise."""
    if isinstance(heads_off, numbers.Integral) and not isinstance(heads_off, bool):
        heads_off = [heads_off]
    if isinstance(heads_off, (str, bytes)) or not hasattr(heads_off, "__iter__"):
        raise TypeError(f"heads_off must be an int or a sequence of ints, got "
                        f"{type(heads_off).__name__}")
    heads = list(heads_off)
    for head in heads:
        if isinstance(head, bool) or not isinstance(head, numbers.Integral):
            raise TypeError(f"heads_off must hold ints, got "
                            f"{type(head).__name__}")
    if not all(0 <= head < num_heads for head in heads):
        raise ValueError(f"heads_off must be heads 0 to {num_heads - 1}, "
                         f"got {sorted(heads)}")
    return sorted({int(head) for head in heads})


class Pronounced(NamedTuple):
    """What ``pronounce`` returns."""
    said: list  # the phonemes said
    cut: bool  # True if decoding stopped at the longest target, no <eos>
    weights: torch.Tensor  # (num_heads, rows, letters): cross-attention
    rows: list  # the token each row predicts: the phonemes, then <eos>
    heads_off: list  # the heads switched off, sorted


@torch.no_grad()
def pronounce(model, word, letters, phonemes, heads_off=()):
    """One word said by model with ``heads_off`` switched off, and the
    cross-attention weights of the rows that said it (for a head lab).

    Decoding stops at ``<eos>`` or after ``model.position.num_embeddings``
    steps; in the second case the pronunciation is ``cut`` and has no
    ``<eos>`` row. A switched-off head still reports where it looks.
    """
    if not isinstance(word, str):
        raise TypeError(f"word must be a str, got {type(word).__name__}")
    if not isinstance(model, Translator):
        raise TypeError(f"model must be a Translator, got "
                        f"{type(model).__name__}")
    num_heads = model.decoder.cross_attention.num_heads
    off = head_list(heads_off, num_heads)
    device, mask = model.output.weight.device, None
    if off:  # (num_heads,): 0 for a head switched off
        mask = torch.ones(num_heads, device=device).index_fill(
            0, torch.tensor(off, device=device), 0.0)
    (said,), scores = greedy_decode(model, [word], letters, phonemes,
                                    head_mask=mask)
    ids = scores[0].argmax(dim=-1).tolist()  # the tokens decoding chose
    cut = phonemes.eos not in ids
    if not cut:
        ids = ids[:ids.index(phonemes.eos) + 1]
    source, source_valid_lens = pronunciations.encode_words([word], letters)
    decoder_input = torch.tensor([[phonemes.bos, *ids[:-1]]],
                                 device=source.device)  # (1, rows)
    model(source, source_valid_lens, decoder_input, head_mask=mask)
    weights = model.decoder.cross_attention.attention_weights[0]  # (h, T, S)
    return Pronounced(said, cut, weights,
                      [phonemes.tokens[i] for i in ids], off)


@torch.no_grad()
def head_values(model, source):
    """W_o^(h) v_j: what letter j adds to the output through head h of the
    cross-attention of ``model``, for letter ids ``source`` (batch_size, S):
    (batch_size, num_heads, S, num_hiddens)."""
    cross = model.decoder.cross_attention
    num_heads = cross.num_heads
    memory = model.encoder(source)  # (batch_size, S, num_hiddens)
    # (batch_size, S, num_heads, head_size): each head's values
    values = cross.W_v(memory).reshape(*memory.shape[:2], num_heads, -1)
    # W_o's columns per head: (num_hiddens, num_heads, head_size)
    W_o = cross.W_o.weight.reshape(memory.shape[-1], num_heads, -1)
    return torch.einsum("dhk,bshk->bhsd", W_o, values)


def value_weighted(weights, added):
    """Cross-attention ``weights`` (..., num_heads, T, S) times the norm of what
    each letter adds, ``added`` from ``head_values`` (..., num_heads, S, d),
    each row normalized to sum to 1: where a head's output comes from."""
    maps = weights * added.norm(dim=-1).unsqueeze(-2)
    return maps / maps.sum(-1, keepdim=True)
