export * from './guests'
export * from './links'
