#!/usr/bin/env python3
"""extract.py: writes schemas/aten_core.yaml from PyTorch's native_functions.yaml, and
schemas/derivatives_core.yaml from its derivatives.yaml.

    python3 schemas/extract.py [CORPUS_DIR] > schemas/aten_core.yaml
    python3 schemas/extract.py --derivatives [CORPUS_DIR] > schemas/derivatives_core.yaml

Every entry whose operator name (in-place '_' dropped) is listed in OPS below is copied
verbatim, keys and comments included, in the corpus's order. CORPUS_DIR defaults to
../shared/corpus/pytorch-2.11 beside the repository. The list is closed under what the
validator checks (structured delegates, view ops' *_copy twins, autogen names).
"""
import os
import re
import sys

OPS = """
empty empty_strided empty_like zeros zeros_like ones ones_like full full_like arange
rand rand_like randn randn_like normal normal_functional uniform bernoulli copy _to_copy to clone contiguous
view view_copy reshape _reshape_alias _reshape_alias_copy transpose transpose_copy t t_copy
permute permute_copy expand expand_copy slice slice_copy select select_copy narrow narrow_copy
unsqueeze unsqueeze_copy squeeze squeeze_copy flatten split split_copy split_with_sizes
split_with_sizes_copy chunk unbind unbind_copy as_strided as_strided_copy alias alias_copy _unsafe_view
add sub mul div pow maximum minimum eq ne lt le gt ge where clamp clamp_min clamp_max
masked_fill neg abs exp log sqrt rsqrt sin cos tanh sigmoid relu gelu silu erf reciprocal
sign floor ceil round logical_and logical_or logical_xor logical_not
sum mean prod amax amin max min argmax argmin var std logsumexp cumsum softmax log_softmax
_softmax _log_softmax _safe_softmax
native_layer_norm layer_norm rms_norm _fused_rms_norm group_norm native_group_norm
mm bmm addmm matmul linear baddbmm scaled_dot_product_attention
_scaled_dot_product_attention_math
cat stack index_select gather scatter scatter_add embedding tril triu topk sort
""".split()


def entries(text, key):
    """The entries of a YAML list whose items start with '- KEY:' in column 0, each with the
    name of its op (ns:: dropped), in order."""
    starts = [m.start() for m in re.finditer(r"^- " + key + ":", text, re.M)]
    for i, s in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        block = text[s:end]
        name = re.match(r"- " + key + r":\s+([\w:]+)", block).group(1).split("::")[-1]
        yield name, block


def wanted(name):
    base = name[:-1] if name.endswith("_") and not name.endswith("__") else name
    return name in OPS or base in OPS


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    args = sys.argv[1:]
    derivatives = bool(args) and args[0] == "--derivatives"
    if derivatives:
        args = args[1:]
    corpus = args[0] if args else os.path.join(here, "..", "..", "shared", "corpus",
                                               "pytorch-2.11")
    if derivatives:
        text = open(os.path.join(corpus, "derivatives.yaml"), encoding="utf-8").read()
        out = [block.rstrip() + "\n\n" for name, block in entries(text, "name")
               if wanted(name.split(".")[0])]
        sys.stdout.write(
            "# derivatives_core.yaml: the derivative formulas of the operators of aten_core.yaml,\n"
            "# for the generated autograd kernels (docs/autograd.md). Made by schemas/extract.py\n"
            "# --derivatives.\n"
            "#\n"
            "# Each entry is copied verbatim from PyTorch 2.11.0's tools/autograd/derivatives.yaml\n"
            "# (BSD-3-Clause, Copyright (c) Facebook, Inc. and its affiliates, and the PyTorch\n"
            "# contributors), keys and comments included.\n\n")
        sys.stdout.write("".join(out).rstrip() + "\n")
        return
    text = open(os.path.join(corpus, "native_functions.yaml"), encoding="utf-8").read()
    # entries start at "- func:" in column 0; comments before an entry travel with it
    out = [block.rstrip() + "\n\n" for name, block in entries(text, "func") if wanted(name)]
    sys.stdout.write(
        "# aten_core.yaml: the core of ATen's operators that the CPU kernels implement, for the\n"
        "# generated aten library and its demo. Made by schemas/extract.py (run it again after\n"
        "# changing its list).\n"
        "#\n"
        "# Each entry is copied verbatim from PyTorch 2.11.0's aten/src/ATen/native/\n"
        "# native_functions.yaml (BSD-3-Clause, Copyright (c) Facebook, Inc. and its affiliates, and\n"
        "# the PyTorch contributors), keys and comments included.\n\n")
    sys.stdout.write("".join(out).rstrip() + "\n")


if __name__ == "__main__":
    main()
