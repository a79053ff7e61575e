// Images to tensors and back, with onnxruntime-common's conventions (Tensor.fromImage, tensor.toImageData,
// tensor.toDataURL), so ORT-written pre- and post-processing gives the same numbers:
//   to a tensor:   value = (pixel + bias[c]) / mean[c]      (defaults mean 255, bias 0: pixels to [0, 1])
//   to an image:   pixel = (value - bias[c]) * mean[c]      (then clamped to 0..255 by the pixel array)
// Tensors are float32 NCHW [1, C, H, W]; C is 3 (RGB, BGR, RBG) or 4 (RGBA). Pixels are RGBA (ImageData's
// layout) or RGB. This file knows nothing of Tensor; tensor.ts builds them.
import { OneModelError } from './errors.js';

export type ImageChannels = 'RGB' | 'RGBA' | 'BGR' | 'RBG';

export interface ImageNormalization {
  /** Divisor per channel (a number for all, or [R, G, B, A?]); default 255. */
  mean?: number | readonly number[];
  /** Added per channel before dividing (to a tensor) or subtracted after multiplying back; default 0. */
  bias?: number | readonly number[];
}

export interface ImageToTensorOptions {
  /** Layout of the pixels given as a buffer: 'RGBA' (default, as in ImageData) or 'RGB'. */
  format?: 'RGBA' | 'RGB';
  /** Channels of the tensor made, in order: 'RGB' (default), 'RGBA', 'BGR' or 'RBG'. */
  tensorFormat?: ImageChannels;
  /** Only 'NCHW' (ORT refuses 'NHWC' too). */
  tensorLayout?: 'NCHW' | 'NHWC';
  norm?: ImageNormalization;
  /** Pixel-buffer sources: their size. */
  width?: number;
  height?: number;
  /** ORT's resizing options: taken (as ORT takes them) only by the canvas paths of browsers. */
  resizedWidth?: number;
  resizedHeight?: number;
  dataType?: 'float32';
}

export interface TensorToImageOptions {
  /** Channels of the tensor, in order (default 'RGB'; a 4-channel tensor must say 'RGBA'). */
  format?: ImageChannels;
  tensorLayout?: 'NCHW' | 'NHWC';
  norm?: ImageNormalization;
}

function invalid(message: string): OneModelError {
  return new OneModelError('InvalidArgument', message);
}

function perChannel(v: number | readonly number[] | undefined, fallback: number, alpha: number): number[] {
  if (v === undefined) return [fallback, fallback, fallback, fallback];
  if (typeof v === 'number') return [v, v, v, v];
  if (!Array.isArray(v) || v.length < 3) throw invalid('norm.mean and norm.bias take a number or [R, G, B, A?]');
  return [v[0]!, v[1]!, v[2]!, v[3] ?? alpha];
}

// Plane index of each of R, G, B, A in a tensor of `format` (-1: absent).
function planes(format: ImageChannels): [number, number, number, number] {
  switch (format) {
    case 'RGB':
      return [0, 1, 2, -1];
    case 'RGBA':
      return [0, 1, 2, 3];
    case 'BGR':
      return [2, 1, 0, -1];
    case 'RBG':
      return [0, 2, 1, -1];
  }
  throw invalid(`image format '${String(format)}' is not RGB, RGBA, BGR or RBG`);
}

function checkSize(width: unknown, height: unknown): void {
  for (const [name, v] of [
    ['width', width],
    ['height', height],
  ] as const) {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0)
      throw invalid(`image ${name} ${String(v)} is not a positive integer`);
  }
}

/** Float32 NCHW data of pixels (RGBA or RGB, row-major) under ORT's normalization. */
export function pixelsToFloat(
  pixels: ArrayLike<number>,
  width: number,
  height: number,
  options: ImageToTensorOptions = {},
): { data: Float32Array; dims: number[] } {
  checkSize(width, height);
  if (options.tensorLayout === 'NHWC')
    throw new OneModelError('Unsupported', 'NHWC tensor layout is not supported (as in ORT)');
  const step = (options.format ?? 'RGBA') === 'RGB' ? 3 : 4;
  if (options.format !== undefined && options.format !== 'RGB' && options.format !== 'RGBA') {
    throw invalid(`pixel format '${String(options.format)}' is not RGBA or RGB`);
  }
  const stride = width * height;
  if (pixels.length < stride * step)
    throw invalid(`${pixels.length} pixel values for a ${width}x${height} image of ${step} channels`);
  const out = options.tensorFormat ?? 'RGB';
  const where = planes(out);
  const mean = perChannel(options.norm?.mean, 255, 255);
  const bias = perChannel(options.norm?.bias, 0, 0);
  const channels = out === 'RGBA' ? 4 : 3;
  const data = new Float32Array(stride * channels);
  for (let c = 0; c < 4; c++) {
    const plane = where[c]!;
    if (plane < 0 || (c === 3 && step === 3)) continue;
    const base = plane * stride;
    for (let i = 0; i < stride; i++) data[base + i] = (pixels[i * step + c]! + bias[c]!) / mean[c]!;
  }
  return { data, dims: [1, channels, height, width] };
}

/** RGBA pixels of a float32 image tensor under ORT's normalization (alpha 255 when the tensor has none). */
export function floatToPixels(
  data: ArrayLike<number>,
  dims: readonly number[],
  options: TensorToImageOptions = {},
): { rgba: Uint8ClampedArray; width: number; height: number } {
  if (dims.length !== 4 || dims[0] !== 1) throw invalid(`an image tensor is [1, C, H, W], got [${dims.join(',')}]`);
  const nhwc = options.tensorLayout === 'NHWC';
  const channels = nhwc ? dims[3]! : dims[1]!;
  const height = nhwc ? dims[1]! : dims[2]!;
  const width = nhwc ? dims[2]! : dims[3]!;
  const format = options.format ?? 'RGB';
  if (
    (channels === 4 && format !== 'RGBA') ||
    (channels === 3 && format === 'RGBA') ||
    (channels !== 3 && channels !== 4)
  ) {
    throw invalid(`tensor format '${format}' does not match ${channels} channels`);
  }
  const where = planes(format);
  const mean = perChannel(options.norm?.mean, 255, 255);
  const bias = perChannel(options.norm?.bias, 0, 0);
  const stride = width * height;
  const rgba = new Uint8ClampedArray(stride * 4);
  for (let i = 0; i < stride; i++) {
    for (let c = 0; c < 4; c++) {
      const plane = where[c]!;
      if (plane < 0) {
        rgba[i * 4 + c] = 255;
        continue;
      }
      const at = nhwc ? i * channels + plane : plane * stride + i;
      rgba[i * 4 + c] = (data[at]! - bias[c]!) * mean[c]!;
    }
  }
  return { rgba, width, height };
}

type Canvas2D = {
  drawImage(image: unknown, x: number, y: number, w?: number, h?: number): void;
  getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray; width: number; height: number };
  createImageData(w: number, h: number): { data: Uint8ClampedArray };
  putImageData(image: unknown, x: number, y: number): void;
};
type CanvasLike = { width: number; height: number; getContext(kind: '2d'): Canvas2D | null; toDataURL?(): string };

/** A 2-D canvas of the page or worker; Unsupported where there is none (Node). */
export function canvas(width: number, height: number): { canvas: CanvasLike; ctx: Canvas2D } {
  const g = globalThis as {
    document?: { createElement(t: 'canvas'): CanvasLike };
    OffscreenCanvas?: new (w: number, h: number) => CanvasLike;
  };
  const c =
    g.document !== undefined
      ? g.document.createElement('canvas')
      : g.OffscreenCanvas !== undefined
        ? new g.OffscreenCanvas(width, height)
        : undefined;
  if (c === undefined)
    throw new OneModelError(
      'Unsupported',
      'images need a canvas (a browser page or worker); pass pixels with width and height instead',
    );
  c.width = width;
  c.height = height;
  const ctx = c.getContext('2d');
  if (ctx === null) throw new OneModelError('Unsupported', 'the canvas has no 2-D context');
  return { canvas: c, ctx };
}

/** Pixels (RGBA) of an image source: ImageData or {data, width, height}, an element or bitmap, or a URL. */
export async function sourcePixels(
  source: unknown,
  options: ImageToTensorOptions,
): Promise<{ pixels: ArrayLike<number>; width: number; height: number; format: 'RGBA' | 'RGB' }> {
  const s = source as { data?: unknown; width?: number; height?: number };
  if (typeof source === 'object' && source !== null && ArrayBuffer.isView(s.data) && typeof s.width === 'number') {
    return { pixels: s.data as unknown as ArrayLike<number>, width: s.width, height: s.height!, format: 'RGBA' };
  }
  if (ArrayBuffer.isView(source)) {
    checkSize(options.width, options.height);
    return {
      pixels: source as unknown as ArrayLike<number>,
      width: options.width!,
      height: options.height!,
      format: options.format ?? 'RGBA',
    };
  }
  const g = globalThis as {
    Image?: new () => {
      src: string;
      crossOrigin: string;
      onload: (() => void) | null;
      onerror: ((e: unknown) => void) | null;
      width: number;
      height: number;
    };
  };
  let image: { width: number; height: number } = s as { width: number; height: number };
  if (typeof source === 'string') {
    if (g.Image === undefined)
      throw new OneModelError('Unsupported', 'loading an image from a URL needs a browser page');
    const img = new g.Image();
    img.crossOrigin = 'Anonymous';
    await new Promise<void>((resolve, reject) => {
      img.onload = () => resolve();
      img.onerror = (e) => reject(new OneModelError('Io', `cannot load the image ${source}: ${String(e)}`));
      img.src = source;
    });
    image = img;
  } else if (typeof source !== 'object' || source === null || typeof s.width !== 'number') {
    throw invalid(
      'an image is ImageData, {data, width, height}, a pixel buffer with width and height, an image element or bitmap, or a URL',
    );
  }
  const width = options.resizedWidth ?? image.width;
  const height = options.resizedHeight ?? image.height;
  const { ctx } = canvas(image.width, image.height);
  ctx.drawImage(image, 0, 0);
  return { pixels: ctx.getImageData(0, 0, width, height).data, width, height, format: 'RGBA' };
}
