// The API's types: client/schema.d.ts, generated from the OpenAPI document, shipped as it is.
export * from '../schema.js'
