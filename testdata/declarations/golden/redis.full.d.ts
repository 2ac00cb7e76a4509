declare const redis: {
  /** Set a Redis key-value pair with optional expiration */
  set(params: {
    /** Redis key */
    key: string;
    /** Value to store */
    value: string;
    /** Optional expiration time in seconds */
    expireSeconds?: number;
  }): Promise<unknown>;
  /** Get value by key from Redis */
  get(params: {
    /** Redis key to retrieve */
    key: string;
  }): Promise<unknown>;
  /** Delete one or more keys from Redis */
  "delete"(params: {
    /** Key or array of keys to delete */
    key: string | string[];
  }): Promise<unknown>;
  /** List Redis keys matching a pattern */
  list(params?: {
    /** Pattern to match keys (default: *) */
    pattern?: string;
  }): Promise<unknown>;
};
