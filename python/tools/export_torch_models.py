"""Exports the model fixtures of python/tests/test_models.py: small Hugging
Face models with random weights built from a config (no downloads), through
torch-mlir (rpe.torch_import.export), with transformers' outputs.

    python3 -m venv /tmp/models-venv
    /tmp/models-venv/bin/pip install torch torch-mlir transformers numpy
    /tmp/models-venv/bin/python python/tools/export_torch_models.py

Writes python/tests/fixtures/models/<name>.mlir and <name>.npz (inputs,
reference output, versions); model names as arguments write only those."""

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
OUT = os.path.join(ROOT, "python", "tests", "fixtures", "models")

from rpe.torch_import import export  # noqa: E402


class LastHidden:
    """Wraps a transformers model: its input (keyword `arg`, input ids by
    default) -> last hidden state."""

    def __new__(cls, model, arg="input_ids"):
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, x):
                return self.model(**{arg: x}).last_hidden_state
        return Wrapped()


def t5_encoder():
    import torch
    from transformers import T5Config, T5EncoderModel
    torch.manual_seed(0)
    config = T5Config(vocab_size=64, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                      num_heads=4, relative_attention_num_buckets=32,
                      relative_attention_max_distance=128, dropout_rate=0.0,
                      feed_forward_proj="relu")
    config._attn_implementation = "eager"
    model = LastHidden(T5EncoderModel(config).eval())
    ids = torch.randint(0, 64, (1, 16))
    return model, (ids,), {"layers": 2, "heads": 4, "length": 16,
                           "config": config.to_dict()}


def _decoder(model_class, config, **info):
    """A decoder-only model of transformers (`model_class(config)`, eager
    attention, random weights from seed 0) on 16 random token ids."""
    import torch
    torch.manual_seed(0)
    config._attn_implementation = "eager"
    model = LastHidden(model_class(config).eval())
    ids = torch.randint(0, 64, (1, 16))
    return model, (ids,), dict(layers=2, heads=4, kv_heads=2, length=16, **info)


def llama():
    from transformers import LlamaConfig, LlamaModel
    return _decoder(LlamaModel, LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=64))


def mistral():
    """LLaMA's layers with Mistral's sliding window (5 of the 16 tokens):
    transformers' band mask, causal and j > i - 5."""
    from transformers import MistralConfig, MistralModel
    return _decoder(MistralModel, MistralConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=64, sliding_window=5), sliding_window=5)


def gemma2():
    """Gemma 2: a sliding-window layer (5 tokens) and a global one, both
    with the attention soft-cap (50), query_pre_attn_scalar 8. The MLP's
    activation is the exact GELU: torch-mlir decomposes Gemma's default
    tanh GELU with sqrt(2/pi) as 0.797724 (it is 0.7978846), which moves
    the exported model's output 2.8e-5 (relative) from transformers'."""
    from transformers import Gemma2Config, Gemma2Model
    return _decoder(Gemma2Model, Gemma2Config(
        vocab_size=64, hidden_size=32, intermediate_size=64,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        head_dim=8, max_position_embeddings=64, sliding_window=5,
        attn_logit_softcapping=50.0, query_pre_attn_scalar=8,
        hidden_activation="gelu"), sliding_window=5, softcap=50.0)


def modernbert():
    """ModernBERT: global attention in its first and third layers,
    bidirectional local attention (|i - j| <= 2 of 16 tokens,
    local_attention 4) in the second, RoPE with each its own theta."""
    import torch
    from transformers import ModernBertConfig, ModernBertModel
    torch.manual_seed(0)
    config = ModernBertConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                              num_hidden_layers=3, num_attention_heads=4,
                              max_position_embeddings=64, local_attention=4,
                              global_attn_every_n_layers=2, pad_token_id=0,
                              bos_token_id=1, eos_token_id=2, cls_token_id=1,
                              sep_token_id=2)
    config._attn_implementation = "eager"
    model = LastHidden(ModernBertModel(config).eval())
    ids = torch.randint(3, 64, (1, 16))
    return model, (ids,), {"layers": 3, "heads": 4, "length": 16,
                           "local_attention": 4}


def deberta_v2():
    import torch
    from transformers import DebertaV2Config, DebertaV2Model
    torch.manual_seed(0)
    config = DebertaV2Config(vocab_size=64, hidden_size=32, intermediate_size=64,
                             num_hidden_layers=2, num_attention_heads=4,
                             max_position_embeddings=64, relative_attention=True,
                             position_buckets=8, max_relative_positions=16,
                             pos_att_type=["c2p", "p2c"], hidden_dropout_prob=0.0,
                             attention_probs_dropout_prob=0.0)
    model = LastHidden(DebertaV2Model(config).eval())
    # 24 tokens: the Lq×Lk scores (24×24) differ in shape from the L×2·span
    # projections (24×16) the fused attention keeps.
    ids = torch.randint(0, 64, (1, 24))
    # Exact GELU: math.erf in the exported IR.
    return model, (ids,), {"layers": 2, "heads": 4, "length": 24}


def t5_decoder():
    """T5's decoder stack: causal self-attention with unidirectional buckets
    (bias shared across layers) and cross-attention to 12 encoder states
    (no position bias: transformers adds a zero bias there)."""
    import torch
    from transformers import T5Config, T5Model
    torch.manual_seed(0)
    config = T5Config(vocab_size=64, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                      num_decoder_layers=2, num_heads=4,
                      relative_attention_num_buckets=32,
                      relative_attention_max_distance=128, dropout_rate=0.0,
                      feed_forward_proj="relu", use_cache=False)
    config._attn_implementation = "eager"
    decoder = T5Model(config).eval().get_decoder()

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.decoder = decoder

        def forward(self, ids, encoder_states):
            return self.decoder(input_ids=ids,
                                encoder_hidden_states=encoder_states,
                                use_cache=False).last_hidden_state

    ids = torch.randint(0, 64, (1, 16))
    states = torch.randn(1, 12, 32)
    return Decoder(), (ids, states), {"layers": 2, "heads": 4, "length": 16,
                                     "encoder_length": 12}


def bloom():
    """BLOOM: ALiBi (slopes times key positions, added through baddbmm),
    causal."""
    import torch
    from transformers import BloomConfig, BloomModel
    torch.manual_seed(0)
    config = BloomConfig(vocab_size=64, hidden_size=32, n_layer=2, n_head=4,
                         hidden_dropout=0.0, attention_dropout=0.0,
                         use_cache=False)
    config._attn_implementation = "eager"
    model = LastHidden(BloomModel(config).eval())
    ids = torch.randint(0, 64, (1, 16))
    return model, (ids,), {"layers": 2, "heads": 4, "length": 16}


def swin():
    """Swin: window attention with the relative position bias table gathered
    by the constant relative_position_index, shifted windows with their
    mask."""
    import torch
    from transformers import SwinConfig, SwinModel
    torch.manual_seed(0)
    config = SwinConfig(image_size=32, patch_size=4, num_channels=3,
                        embed_dim=16, depths=[2], num_heads=[2], window_size=4,
                        mlp_ratio=2.0, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0, drop_path_rate=0.0)
    config._attn_implementation = "eager"
    model = LastHidden(SwinModel(config, add_pooling_layer=False).eval(),
                       arg="pixel_values")
    pixels = torch.randn(1, 3, 32, 32)
    return model, (pixels,), {"layers": 2, "heads": 2, "window": 4}


MODELS = {"t5_encoder": t5_encoder, "t5_decoder": t5_decoder, "llama": llama,
          "deberta_v2": deberta_v2, "bloom": bloom, "swin": swin,
          "mistral": mistral, "gemma2": gemma2, "modernbert": modernbert}


def main():
    import torch
    only = sys.argv[1:] or list(MODELS)
    import torch_mlir  # noqa: F401
    import transformers
    os.makedirs(OUT, exist_ok=True)
    for name in only:
        model, inputs, info = MODELS[name]()
        text = export(model, inputs, func_name=name)
        with torch.no_grad():
            out = model(*inputs)
        with open(os.path.join(OUT, name + ".mlir"), "w") as f:
            f.write(text)
        meta = {"model": name, "info": {k: v for k, v in info.items() if k != "config"},
                "versions": {"torch": torch.__version__,
                             "transformers": transformers.__version__},
                "generator": "python/tools/export_torch_models.py"}
        np.savez_compressed(os.path.join(OUT, name + ".npz"),
                            meta=np.array(json.dumps(meta, sort_keys=True)),
                            **{"input%d" % i: t.numpy() for i, t in enumerate(inputs)},
                            output=out.numpy())
        print("%s: %d bytes of MLIR" % (name, len(text)))


if __name__ == "__main__":
    main()
