// Eager values and tracing from JavaScript (docs/model-building.md section 9): the engine's EagerTensor and Tracer
// in the wasm module (bindings/trace_embind.cc). Every operation computes now on the engine's kernels; while a
// Tracer records, operations on values that depend on its inputs are recorded too, and finish() returns the ONNX
// bytes. Like GraphBuilder, it needs `await GraphBuilder.ready()` (or `await Tracer.ready()`) once first.
import { GraphBuilder, builderEngine } from './builder.js';
import { OneModelError, fromNative } from './errors.js';
import type { NativeEager, NativeTracer } from './native.js';
import { Operators, encodeAttributes } from './operators.js';
import type { AttributeValue } from './operators.js';
import { Tensor, isTensorType, typeCode, typeName } from './tensor.js';
import type { TensorType } from './tensor.js';

function call<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw fromNative(e);
  }
}

// Embind handles are freed when their JS wrapper is collected.
const handles =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<{ delete(): void }>((h) => {
        try {
          h.delete();
        } catch {
          // already freed
        }
      })
    : undefined;

function tensorOf(t: { dtype: number; dims: number[]; data: ArrayBufferView }): Tensor {
  return new Tensor(typeName(t.dtype) as TensorType, t.data as never, t.dims);
}

/** An eager value: computed at once; while a trace records and it depends on the trace's inputs, also recorded. */
export class EagerValue extends Operators<EagerValue> {
  /** @internal */
  readonly native: NativeEager;

  /** @internal */
  constructor(native: NativeEager) {
    super();
    this.native = native;
    handles?.register(this, native);
  }

  /** A value holding a copy of `tensor`'s data. */
  static from(tensor: Tensor): EagerValue {
    if (!(tensor instanceof Tensor))
      throw new OneModelError('InvalidArgument', 'EagerValue.from: a Tensor is required');
    const engine = builderEngine();
    return new EagerValue(
      call(() => engine.WasmEager.constant(typeCode(tensor.type), [...tensor.dims], tensor.data as ArrayBufferView)),
    );
  }

  get type(): TensorType {
    return typeName(call(() => this.native.dtype())) as TensorType;
  }
  /** The extents, as plain numbers (also while tracing; the tracer keeps which are symbolic). */
  get dims(): number[] {
    return call(() => this.native.sizes());
  }
  /** The values; DataDependent while a trace records and this value depends on its inputs. */
  toTensor(): Tensor {
    return tensorOf(call(() => this.native.value()));
  }

  /** Any operator of the engine by its ONNX name; null for an omitted optional input. */
  static op(
    opType: string,
    inputs: readonly (EagerValue | null)[],
    attrs: Readonly<Record<string, AttributeValue>> = {},
    numOutputs = 1,
  ): EagerValue[] {
    const engine = builderEngine();
    const native = inputs.map((v) => {
      if (v === null) return null;
      if (!(v instanceof EagerValue))
        throw new OneModelError('InvalidArgument', `${opType}: an input is not an EagerValue`);
      return v.native;
    });
    const encoded = encodeAttributes(attrs);
    return call(() => {
      const list = engine.WasmEager.op(opType, native, encoded, numOutputs);
      try {
        return Array.from({ length: list.size() }, (_, i) => new EagerValue(list.get(i)));
      } finally {
        list.delete();
      }
    });
  }

  protected apply(opType: string, inputs: (EagerValue | null)[], attrs: Record<string, AttributeValue>): EagerValue {
    return EagerValue.op(opType, [this, ...inputs], attrs)[0]!;
  }
  protected ints(values: readonly number[]): EagerValue {
    return EagerValue.from(new Tensor('int64', BigInt64Array.from(values.map((v) => BigInt(v))), [values.length]));
  }
}

/** The arithmetic of eager operations from now on: 'fast' (default) or 'exact' (bits equal everywhere). */
export function setEagerMode(mode: 'fast' | 'exact'): void {
  if (mode !== 'fast' && mode !== 'exact') throw new OneModelError('InvalidArgument', `eager mode '${String(mode)}'`);
  const engine = builderEngine();
  call(() => engine.setEagerMode(mode === 'exact' ? 1 : 0));
}

/** A recording of an eager run, written as ONNX (docs/model-building.md sections 8-9). One per thread at a time. */
export class Tracer {
  readonly #native: NativeTracer;

  private constructor(native: NativeTracer) {
    this.#native = native;
    handles?.register(this, native);
  }

  /** Loads the wasm module (as GraphBuilder.ready()). */
  static ready(): Promise<void> {
    return GraphBuilder.ready();
  }

  /** Starts recording; InvalidUsage when a trace records already. */
  static begin(): Tracer {
    const engine = builderEngine();
    return new Tracer(call(() => engine.WasmTracer.begin()));
  }

  /** A graph input with `example`'s type and values; axisNames[i] (a string) makes axis i symbolic. */
  input(name: string, example: Tensor, axisNames: readonly (string | null | undefined)[] = []): EagerValue {
    if (!(example instanceof Tensor))
      throw new OneModelError('InvalidArgument', `input '${name}': a Tensor is required`);
    if (!isTensorType(example.type)) throw new OneModelError('InvalidArgument', `input '${name}': unsupported type`);
    const axes = axisNames.map((a) => a ?? '');
    return new EagerValue(
      call(() =>
        this.#native.input(name, typeCode(example.type), [...example.dims], example.data as ArrayBufferView, axes),
      ),
    );
  }

  /** Names a weight: its initializer gets this name when the trace captures it. */
  parameter(name: string, weight: EagerValue | Tensor): EagerValue {
    const value = weight instanceof EagerValue ? weight : EagerValue.from(weight);
    call(() => this.#native.parameter(name, value.native));
    return value;
  }

  /** The recording, pruned to what `outputs` need, outputs so named; stops recording. */
  finish(outputs: Readonly<Record<string, EagerValue>>): { onnx: Uint8Array } {
    const entries = Object.entries(outputs);
    for (const [name, v] of entries) {
      if (!(v instanceof EagerValue))
        throw new OneModelError('InvalidArgument', `output '${name}' is not an EagerValue`);
    }
    const onnx = call(() =>
      this.#native.finish(
        entries.map(([n]) => n),
        entries.map(([, v]) => v.native),
      ),
    );
    return { onnx };
  }

  /** Stops recording without a model (finish() also stops). */
  end(): void {
    call(() => this.#native.end());
  }
}
