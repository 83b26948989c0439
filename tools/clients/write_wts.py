"""Write a state_dict as tensorrtx's .wts text (gen_wts.py's format: a count line, then per entry
"name n hex hex ..." with each value as the 8 hex digits of its big-endian float32), vectorized with numpy:
tens of millions of weights in seconds where a per-value struct.pack loop takes tens of minutes."""
import numpy as np


def hex_words(values):
    """b"3f800000 40000000 ..." for a float array (big-endian float32, lowercase hex, space-separated)."""
    v = np.ascontiguousarray(np.asarray(values, np.float32).reshape(-1)).astype(">f4")
    if v.size == 0:
        return b""
    nib = np.frombuffer(v.tobytes(), np.uint8)
    digits = np.frombuffer(b"0123456789abcdef", np.uint8)
    out = np.empty((v.size, 9), np.uint8)  # 8 hex digits and a space per value
    hexes = np.stack([digits[nib >> 4], digits[nib & 15]], axis=1).reshape(v.size, 8)
    out[:, :8] = hexes
    out[:, 8] = ord(" ")
    return out.reshape(-1)[:-1].tobytes()


def write_wts(path, state_dict):
    """state_dict: name -> array-like (torch tensors are converted on the CPU)."""
    with open(path, "wb") as f:
        f.write(b"%d\n" % len(state_dict))
        for k, t in state_dict.items():
            a = t.detach().cpu().float().numpy() if hasattr(t, "detach") else np.asarray(t, np.float32)
            f.write(b"%s %d " % (k.encode(), a.size) + hex_words(a) + b"\n")


if __name__ == "__main__":  # self-check against the per-value struct.pack of gen_wts.py's format
    import struct
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    x[:4] = [0.0, -0.0, np.inf, 1e-40]
    assert hex_words(x).decode() == " ".join(struct.pack(">f", float(e)).hex() for e in x)
    print("ok")
