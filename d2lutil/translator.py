"""Notebook 8's translator from spelling to sound, which notebook 9 retrains.

Notebook 8 builds and trains it and prints this code where it teaches it;
notebook 9 trains it again with the same seed (the same weights, so the same
outputs) and reads its heads. The pieces:

* ``Encoder``: letter plus position embeddings, normalized (no self-attention);
* ``DecoderLayer``: causal self-attention (with a ``KVCache`` when decoding),
  cross-attention over the letters (with a ``head_mask``) and a feed-forward
  network, each after a LayerNorm and added back (pre-norm residuals);
* ``Translator``: the encoder, phoneme and position embeddings, one decoder
  layer and a linear readout over the phonemes;
* ``sequence_loss``, ``warmup_then_decay``, ``train_step`` and ``train``: the
  masked cross-entropy, the learning-rate schedule and the training loop;
* ``greedy_decode``: pronounce words, with or without a cache;
* ``target_len``: the longest pronunciation of a dictionary, plus ``<eos>``.

Every tensor the code makes itself is made on its inputs' device.
"""

import torch
from torch import nn
from torch.nn import functional as F

from . import pronunciations
from .attention import KVCache, MultiHeadAttention
from .shapes import check_positive_int, check_seed

__all__ = ["DecoderLayer", "Encoder", "Translator", "greedy_decode",
           "sequence_loss", "target_len", "train", "train_step",
           "warmup_then_decay"]


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
    return max(len(p) for p in entries.values()) + 1


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
          batch_size=128, lr=0.02, warmup=50, progress=None):
    """A Translator trained on batches drawn from words, and its losses.

    ``progress`` wraps the range of steps (a progress bar), if given.
    """
    check_seed(seed)
    check_positive_int("batch_size", batch_size)
    if not words:
        raise ValueError("words must hold at least one training word")
    torch.manual_seed(seed)  # the initial parameters
    model = Translator(len(letters), len(phonemes),
                       pronunciations.MAX_LETTERS, target_len(entries))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    schedule = warmup_then_decay(optimizer, warmup, num_steps)
    draws = torch.Generator().manual_seed(seed)  # which words, when
    losses = []
    steps = range(num_steps) if progress is None else progress(
        range(num_steps))
    for _ in steps:
        picks = torch.randint(len(words), (batch_size,),
                              generator=draws).tolist()
        batch = pronunciations.make_batch(
            [words[i] for i in picks], entries, letters, phonemes)
        losses.append(train_step(model, optimizer, schedule, batch))
    return model.eval(), losses


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
