type A = {
  b?: B;
};

type Args = {
  query: string;
  limit?: number;
};

type B = {
  a?: A;
};

type Base = {
  base: string;
};

/** Config as config_a sees it. */
type Config = {
  a: string;
};

type ConfigB_Config = {
  b: number;
};

type ConfigB_Config_2 = {
  c?: boolean;
};

type Item = {
  n?: number;
};

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

type Loop = unknown;

type Node = {
  value: string;
  children?: Node[];
};

type SelfTreeInput = {
  name: string;
  children?: SelfTreeInput[];
};

type _1st = string;

type _Promise = boolean;

type _default = number;

type _string = string;

type a_b = number;

type anchoredThing = {
  ok?: boolean;
};

declare const constructs: {
  /** The real get_sum; `get-sum`'s alias must become get_sum_2. */
  get_sum(params: {
    a: number;
  }): Promise<unknown>;
  /** Hyphenated twin. */
  "get-sum"(params: {
    a: number;
    b: number;
  }): Promise<number>;
  /** Alias for get-sum. */
  get_sum_2: (typeof constructs)["get-sum"];
  /** A tool named with a reserved word. */
  "delete"(params: {
    key: string | string[];
  }): Promise<unknown>;
  /**
   * Leading digit and a dot.
   * Second line after CRLF.
   */
  "1st.tool"(): Promise<unknown>;
  /** Alias for 1st.tool. */
  _1st_tool: (typeof constructs)["1st.tool"];
  no_schema(): Promise<unknown>;
  /** Defines $defs/Config one way. */
  config_a(params: {
    /** Sibling description of a $ref. */
    config: Config;
  }): Promise<unknown>;
  /** Defines a different $defs/Config: must not collapse onto config_a's. */
  "config-b"(params: {
    config: ConfigB_Config;
  }): Promise<{
    config?: ConfigB_Config_2;
  }>;
  /** Alias for config-b. */
  config_b: (typeof constructs)["config-b"];
  /** Same Config body as config_a: shares the name. */
  config_same(params?: {
    config?: Config;
  }): Promise<unknown>;
  /** Recursive and mutually recursive definitions. */
  tree(params?: {
    root?: Node;
    left?: A;
    json?: Json;
  }): Promise<unknown>;
  /** Root-level $ref (pydantic root model): params must not vanish. */
  root_ref(params: Args): Promise<unknown>;
  /** Root referenced from inside (`$ref: "#"`). */
  self_tree(params: SelfTreeInput): Promise<unknown>;
  /** Composition keywords next to sibling properties. */
  composition(params: {
    either: {
      id: string;
      url?: string;
    } | {
      id?: string;
      url: string;
    };
    extended?: {
      extra?: boolean;
    } & Base;
    variants: {
      kind: "circle";
      radius: number;
    } | {
      kind: "square";
      side: number;
    };
    refWithProps?: Base & {
      more: string;
    };
    allOfOnly?: {
      x: number;
    } & {
      y?: number;
    };
    impossible?: string;
  }): Promise<unknown>;
  /** Type arrays, nullable, const, enum. */
  scalars(params: {
    flag: boolean | string;
    maybe?: string | null;
    openapiNullable?: number | null;
    nullNullable?: null;
    fixed: "v1";
    fixedObject?: { "a": [1, "two", null]; };
    mixedEnum?: "a" | 1 | true | null | "*/*";
    noValues?: never;
    integer?: number;
    anything?: unknown;
    nothing?: never;
    empty?: unknown;
    untypedObject: {
      inner: string;
    };
    wrongType?: unknown;
    negative?: -1.5;
  }): Promise<unknown>;
  /** Arrays and tuples. */
  arrays(params: {
    plain?: string[];
    unionItems?: (string | number)[];
    noItems?: unknown[];
    pair: [string, number];
    pairWithRest?: [string, ...boolean[]];
    openTuple?: [string?, (number | null)?, ...unknown[]];
    draft7Tuple?: [string, number?];
    boundedTuple?: [number, number];
  }): Promise<unknown>;
  /** Maps and index signatures. */
  maps(params?: {
    env?: Record<string, string>;
    closed?: Record<string, never>;
    open?: Record<string, unknown>;
    record?: Record<string, unknown>;
    mixed?: {
      id: number;
      [key: string]: string | number;
    };
    patterned?: Record<string, boolean>;
    refMap?: { [key: string]: Item };
  }): Promise<unknown>;
  /** Awkward property names and $defs names. */
  names(params: {
    "class": string;
    /** () => { /* code *\/ } */
    "function"?: string;
    "my-key": string;
    "with space"?: string;
    "0abc"?: string;
    $dollar?: string;
    type?: string;
    s?: _string;
    d?: _default;
    p?: _Promise;
    n?: _1st;
    slash?: a_b;
    anchored?: anchoredThing;
  }): Promise<unknown>;
  /** Constructs that degrade to unknown with a warning. */
  degraded(params?: {
    external?: unknown;
    fileRef?: unknown;
    dangling?: unknown;
    deep?: {
      n: {
        n: {
          n: {
            n: {
              n: {
                n: {
                  n: {
                    n: {
                      n: {
                        n: {
                          n: {
                            n: {
                              n: {
                                n: {
                                  n: {
                                    n: {
                                      n: {
                                        n: {
                                          n: {
                                            n: {
                                              n: {
                                                n: {
                                                  n: {
                                                    n: {
                                                      n: {
                                                        n: {
                                                          n: {
                                                            n: {
                                                              n: {
                                                                n: {
                                                                  n: {
                                                                    n: {
                                                                      n: {
                                                                        n: {
                                                                          n: {
                                                                            n: {
                                                                              n: {
                                                                                n: {
                                                                                  n: {
                                                                                    n: {
                                                                                      n: {
                                                                                        n: {
                                                                                          n: {
                                                                                            n: {
                                                                                              n: {
                                                                                                n: {
                                                                                                  n: {
                                                                                                    n: {
                                                                                                      n: {
                                                                                                        n: {
                                                                                                          n: {
                                                                                                            n: {
                                                                                                              n: {
                                                                                                                n: {
                                                                                                                  n: {
                                                                                                                    n: {
                                                                                                                      n: {
                                                                                                                        n: {
                                                                                                                          n: {
                                                                                                                            n: {
                                                                                                                              n: {
                                                                                                                                n: {
                                                                                                                                  n: {
                                                                                                                                    n: unknown;
                                                                                                                                  };
                                                                                                                                };
                                                                                                                              };
                                                                                                                            };
                                                                                                                          };
                                                                                                                        };
                                                                                                                      };
                                                                                                                    };
                                                                                                                  };
                                                                                                                };
                                                                                                              };
                                                                                                            };
                                                                                                          };
                                                                                                        };
                                                                                                      };
                                                                                                    };
                                                                                                  };
                                                                                                };
                                                                                              };
                                                                                            };
                                                                                          };
                                                                                        };
                                                                                      };
                                                                                    };
                                                                                  };
                                                                                };
                                                                              };
                                                                            };
                                                                          };
                                                                        };
                                                                      };
                                                                    };
                                                                  };
                                                                };
                                                              };
                                                            };
                                                          };
                                                        };
                                                      };
                                                    };
                                                  };
                                                };
                                              };
                                            };
                                          };
                                        };
                                      };
                                    };
                                  };
                                };
                              };
                            };
                          };
                        };
                      };
                    };
                  };
                };
              };
            };
          };
        };
      };
    };
    loop?: Loop;
  }): Promise<unknown>;
  /**
   * Closes a comment *\/ early?
   *
   * ```json
   * {"a": "${HOME}"}
   * ```
   *
   * Uses `backticks` and ${template} text.
   *
   * Line after LS.
   */
  docs(params?: {
    /** Pattern like **\/*.ext */
    glob?: string;
    /**
     * First line
     * second line *\/
     *
     * after blanks
     */
    multi?: string;
  }): Promise<unknown>;
  /** Output schemas: scalar, $defs shared with input name. */
  outputs(params: {
    config: Config;
  }): Promise<string>;
  /** The whole argument is a map. */
  map_input(params?: Record<string, string>): Promise<unknown>;
  /** Root is an anyOf of two objects. */
  any_root(params: {
    id: string;
  } | {
    name: string;
  }): Promise<unknown>;
  /** Input schema `true`. */
  bool_schema(): Promise<unknown>;
};
