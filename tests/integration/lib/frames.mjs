/*
 * Websocket frames by hand, for tests that speak below the ws library:
 * masked client frames to write, and the server's frames read back.
 */

/* The mask key of every client frame built here. */
export const KEY = Buffer.from([0x37, 0xfa, 0x21, 0x3d]);

/* bytes masked with KEY, as from offset at of a frame's payload. */
export function masked(bytes, at = 0) {
  return Buffer.from(bytes.map((b, i) => b ^ KEY[(at + i) % 4]));
}

/* A masked client frame.  rsv1 marks a compressed message's first frame;
 * declared (a BigInt) claims a length other than the payload's. */
export function clientFrame({ fin = true, rsv1 = false, opcode = 1, payload = Buffer.alloc(0), declared }) {
  const len = declared ?? BigInt(payload.length);
  let head;
  if (len < 126n) {
    head = Buffer.from([0, 0x80 | Number(len)]);
  } else if (len < 65536n) {
    head = Buffer.from([0, 0x80 | 126, 0, 0]);
    head.writeUInt16BE(Number(len), 2);
  } else {
    head = Buffer.alloc(10);
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(len, 2);
  }
  head[0] = (fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | opcode;
  return Buffer.concat([head, KEY, masked(payload)]);
}

/* The server's whole frames in buf (unmasked): [{rsv1, opcode, payload}];
 * a frame cut off at buf's end is left out. */
export function serverFrames(buf) {
  const frames = [];
  let at = 0;
  while (at + 2 <= buf.length) {
    let len = buf[at + 1] & 0x7f, head = 2;
    if (len === 126) { len = buf.readUInt16BE(at + 2); head = 4; }
    else if (len === 127) { len = Number(buf.readBigUInt64BE(at + 2)); head = 10; }
    if (at + head + len > buf.length) break;
    frames.push({ rsv1: (buf[at] & 0x40) !== 0, opcode: buf[at] & 0x0f,
      payload: buf.subarray(at + head, at + head + len) });
    at += head + len;
  }
  return frames;
}
