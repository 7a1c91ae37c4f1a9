// ua-parser-js 1.x (MIT) ships no types; this is the part of its API the click encoder uses.
// (2.x ships types but is AGPL, so it is not an option.)
declare module 'ua-parser-js' {
  export interface UAResult {
    browser: { name?: string; version?: string }
    os: { name?: string; version?: string }
    device: { type?: string; vendor?: string; model?: string }
  }
  export class UAParser {
    constructor(userAgent: string)
    getBrowser(): UAResult['browser']
    getOS(): UAResult['os']
    getDevice(): UAResult['device']
  }
}
