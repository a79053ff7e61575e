// A tiny ONNX protobuf writer for test models made on the fly (one-node graphs over graph inputs), so the
// binding's data paths can be checked for every element type without adding files to testdata/. Field
// numbers are those of onnx.proto (ModelProto, GraphProto, NodeProto, ValueInfoProto, TypeProto, ...).

function varint(n) {
  let v = BigInt(n);
  const out = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return out;
}

const key = (field, wire) => varint((field << 3) | wire);
const int = (field, n) => [...key(field, 0), ...varint(n)];
function bytesField(field, payload) {
  return [...key(field, 2), ...varint(payload.length), ...payload];
}
const str = (field, s) => bytesField(field, [...Buffer.from(s, 'utf8')]);

/** dims: numbers (fixed) or strings (symbolic). */
function valueInfo(name, elemType, dims) {
  const shape = dims.flatMap((d) => bytesField(1, typeof d === 'number' ? int(1, d) : str(2, d)));
  const tensorType = [...int(1, elemType), ...bytesField(2, shape)];
  return [...str(1, name), ...bytesField(2, bytesField(1, tensorType))];
}

function attribute(name, value) {
  // Only integer attributes are needed here (AttributeProto.type INT = 2).
  return [...str(1, name), ...int(3, value), ...int(20, 2)];
}

// A float32 TensorProto (dims 1, data_type 2, name 8, raw_data 9), built as a Buffer: weights can be megabytes.
function floatInitializer({ name, dims, data }) {
  const head = Buffer.from([
    ...dims.flatMap((d) => int(1, d)),
    ...int(2, 1),
    ...str(8, name),
    ...key(9, 2),
    ...varint(data.byteLength),
  ]);
  return Buffer.concat([head, Buffer.from(data.buffer, data.byteOffset, data.byteLength)]);
}

/**
 * A model with one node `opType` reading the graph inputs and then the initializers, writing the graph outputs.
 * inputs/outputs: [{name, elemType, dims}]; initializers: [{name, dims, data: Float32Array}]; attrs: {name: int}.
 */
export function oneNodeModel({ opType, inputs, outputs, initializers = [], attrs = {}, opset = 17 }) {
  const node = [
    ...inputs.flatMap((i) => str(1, i.name)),
    ...initializers.flatMap((i) => str(1, i.name)),
    ...outputs.flatMap((o) => str(2, o.name)),
    ...str(3, 'n0'),
    ...str(4, opType),
    ...Object.entries(attrs).flatMap(([n, v]) => bytesField(5, attribute(n, v))),
  ];
  const tensors = initializers.map(floatInitializer);
  const graph = Buffer.concat([
    Buffer.from([
      ...bytesField(1, node),
      ...str(2, 'g'),
      ...inputs.flatMap((i) => bytesField(11, valueInfo(i.name, i.elemType, i.dims))),
      ...outputs.flatMap((o) => bytesField(12, valueInfo(o.name, o.elemType, o.dims))),
    ]),
    ...tensors.flatMap((t) => [Buffer.from([...key(5, 2), ...varint(t.length)]), t]),
  ]);
  const model = Buffer.concat([
    Buffer.from([
      ...int(1, 8),
      ...bytesField(8, [...str(1, ''), ...int(2, opset)]),
      ...key(7, 2),
      ...varint(graph.length),
    ]),
    graph,
  ]);
  return new Uint8Array(model.buffer, model.byteOffset, model.byteLength);
}
