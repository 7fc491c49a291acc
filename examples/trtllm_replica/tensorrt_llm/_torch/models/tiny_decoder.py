"""A small deterministic decoder used by the replica executor.

All weights are small integers stored as float32, and every intermediate value
stays an integer far below 2**24, so each matmul is exact in float32 whatever
the summation order.  That makes the next-token ids depend only on the token
window of one request: never on batch composition, rank, backend (numpy, torch
CPU, torch CUDA) or how the work was split across pipeline stages.

`TorchTinyDecoder` is a real ``torch.nn.Module`` (used when torch is importable
and asked for); `NumpyTinyDecoder` is the stand-in with the same arithmetic.
Both expose:

- ``next_tokens(windows) -> list[int]``: greedy next token per row;
- ``run_layers(hidden, start, stop)`` / ``embed`` / ``head``: the pieces a
  pipeline stage runs;
- ``draft_tokens(window, k)``: the drafter (the first layer only).
"""

from __future__ import annotations

import numpy as np

VOCAB = 257
DIM = 64
N_LAYERS = 4
WINDOW = 8
MODULUS = 11  # the nonlinearity: h -> (h mod 11) - 5 keeps values in [-5, 5]
_SEED = 20261202


def _weights(vocab: int = VOCAB, dim: int = DIM, n_layers: int = N_LAYERS, window: int = WINDOW):
    rng = np.random.RandomState(_SEED)
    emb = rng.randint(-2, 3, size=(vocab, dim)).astype(np.float32)
    pos = rng.randint(1, 3, size=(window, 1)).astype(np.float32)
    layers = [rng.randint(-2, 3, size=(dim, dim)).astype(np.float32) for _ in range(n_layers)]
    biases = [rng.randint(-3, 4, size=(dim,)).astype(np.float32) for _ in range(n_layers)]
    return emb, pos, layers, biases


def window_of(tokens: list[int], window: int = WINDOW) -> list[int]:
    """The last `window` tokens, left-padded with token 0."""
    tail = list(tokens[-window:])
    return [0] * (window - len(tail)) + tail


class NumpyTinyDecoder:
    """numpy stand-in with exactly the arithmetic of `TorchTinyDecoder`."""

    n_layers = N_LAYERS
    device = "cpu"

    def __init__(self) -> None:
        self.emb, self.pos, self.layers, self.biases = _weights()

    def embed(self, windows: list[list[int]]):
        ids = np.asarray(windows, dtype=np.int64)
        return (self.emb[ids] * self.pos[None, :, :]).sum(axis=1)

    def run_layers(self, hidden, start: int, stop: int):
        for weight, bias in zip(self.layers[start:stop], self.biases[start:stop]):
            hidden = np.remainder(hidden @ weight + bias, MODULUS) - (MODULUS // 2)
        return hidden

    def head(self, hidden) -> list[int]:
        return [int(i) for i in np.argmax(hidden @ self.emb.T, axis=1)]

    def to_wire(self, hidden):
        return np.asarray(hidden).tolist()

    def from_wire(self, rows):
        return np.asarray(rows, dtype=np.float32)

    def next_tokens(self, windows: list[list[int]]) -> list[int]:
        if not windows:
            return []
        return self.head(self.run_layers(self.embed(windows), 0, self.n_layers))

    def draft_tokens(self, tokens: list[int], k: int) -> list[int]:
        out: list[int] = []
        seq = list(tokens)
        for _ in range(k):
            tok = self.head(self.run_layers(self.embed([window_of(seq)]), 0, 1))[0]
            out.append(tok)
            seq.append(tok)
        return out


def _torch_decoder_class():
    import torch

    class TorchTinyDecoder(torch.nn.Module):
        """The same decoder as a torch module (runs on CUDA when given a GPU)."""

        n_layers = N_LAYERS

        def __init__(self, device: str = "cpu") -> None:
            super().__init__()
            emb, pos, layers, biases = _weights()
            self.device = device
            self.emb = torch.nn.Parameter(torch.from_numpy(emb), requires_grad=False)
            self.pos = torch.nn.Parameter(torch.from_numpy(pos), requires_grad=False)
            self.layers = torch.nn.ParameterList(
                [torch.nn.Parameter(torch.from_numpy(w), requires_grad=False) for w in layers])
            self.biases = torch.nn.ParameterList(
                [torch.nn.Parameter(torch.from_numpy(b), requires_grad=False) for b in biases])
            self.to(device)

        @torch.no_grad()
        def embed(self, windows: list[list[int]]):
            ids = torch.as_tensor(windows, dtype=torch.long, device=self.device)
            return (self.emb[ids] * self.pos.unsqueeze(0)).sum(dim=1)

        @torch.no_grad()
        def run_layers(self, hidden, start: int, stop: int):
            for i in range(start, stop):
                hidden = torch.remainder(hidden @ self.layers[i] + self.biases[i], MODULUS) - (MODULUS // 2)
            return hidden

        @torch.no_grad()
        def head(self, hidden) -> list[int]:
            return [int(i) for i in torch.argmax(hidden @ self.emb.T, dim=1).tolist()]

        def to_wire(self, hidden):
            return hidden.cpu().tolist()

        def from_wire(self, rows):
            return torch.as_tensor(rows, dtype=torch.float32, device=self.device)

        def forward(self, windows: list[list[int]]) -> list[int]:
            return self.head(self.run_layers(self.embed(windows), 0, self.n_layers))

        def next_tokens(self, windows: list[list[int]]) -> list[int]:
            if not windows:
                return []
            return self.forward(windows)

        def draft_tokens(self, tokens: list[int], k: int) -> list[int]:
            out: list[int] = []
            seq = list(tokens)
            for _ in range(k):
                tok = self.head(self.run_layers(self.embed([window_of(seq)]), 0, 1))[0]
                out.append(tok)
                seq.append(tok)
            return out

    return TorchTinyDecoder


def build_model(kind: str = "auto", device: str = "cpu"):
    """`kind` is ``torch``, ``numpy`` or ``auto`` (torch when importable)."""
    if kind in ("torch", "auto"):
        try:
            cls = _torch_decoder_class()
        except ImportError:
            if kind == "torch":
                raise
        else:
            return cls(device=device)
    return NumpyTinyDecoder()


def reference_generate(model, prompt: list[int], first_token: int, max_new_tokens: int) -> list[int]:
    """Greedy decoding of one request alone (the single-request ground truth)."""
    seq = list(prompt) + [first_token]
    out = [first_token]
    while len(out) < max_new_tokens:
        tok = model.next_tokens([window_of(seq)])[0]
        seq.append(tok)
        out.append(tok)
    return out
