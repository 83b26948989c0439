

def test_max_unpool_roundtrip_and_output_shape(rng=np.random.default_rng(14)):
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    # MaxPool 2x2 / 2 values and flat indices over the whole tensor (ONNX's Indices), computed here
    win = x.reshape(2, 3, 2, 2, 3, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 2, 3, 4)
    arg = win.argmax(-1)
    vals = win.max(-1)
    n, c, i, j = np.meshgrid(*[np.arange(s) for s in (2, 3, 2, 3)], indexing="ij")
    flat = ((n * 3 + c) * 4 + (2 * i + arg // 2)) * 6 + (2 * j + arg % 2)
    node = h.make_node("MaxUnpool", ["v", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    out = run_model([node], {"v": vals, "i": flat.astype(np.int64)}, ["y"], opset=11)
    ref = np.zeros(x.size, np.float32)
    ref[flat.reshape(-1)] = vals.reshape(-1)
    np.testing.assert_array_equal(out["y"], ref.reshape(x.shape))
    node = h.make_node("MaxUnpool", ["v", "i", "s"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    out = run_model([node], {"v": vals, "i": flat.astype(np.int64), "s": np.array([2, 3, 5, 7], np.int64)}, ["y"],
                    opset=11)
    np.testing.assert_array_equal(out["y"], np.pad(ref.reshape(x.shape), [(0, 0), (0, 0), (0, 1), (0, 1)]))
