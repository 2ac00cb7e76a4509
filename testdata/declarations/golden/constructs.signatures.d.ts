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
  get_sum(params: {
    a: number;
  }): Promise<unknown>;
  "get-sum"(params: {
    a: number;
    b: number;
  }): Promise<number>;
  get_sum_2: (typeof constructs)["get-sum"];
  "delete"(params: {
    key: string | string[];
  }): Promise<unknown>;
  "1st.tool"(): Promise<unknown>;
  _1st_tool: (typeof constructs)["1st.tool"];
  no_schema(): Promise<unknown>;
  config_a(params: {
    config: Config;
  }): Promise<unknown>;
  "config-b"(params: {
    config: ConfigB_Config;
  }): Promise<{
    config?: ConfigB_Config_2;
  }>;
  config_b: (typeof constructs)["config-b"];
  config_same(params?: {
    config?: Config;
  }): Promise<unknown>;
  tree(params?: {
    root?: Node;
    left?: A;
    json?: Json;
  }): Promise<unknown>;
  root_ref(params: Args): Promise<unknown>;
  self_tree(params: SelfTreeInput): Promise<unknown>;
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
  names(params: {
    "class": string;
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
  docs(params?: {
    glob?: string;
    multi?: string;
  }): Promise<unknown>;
  outputs(params: {
    config: Config;
  }): Promise<string>;
  map_input(params?: Record<string, string>): Promise<unknown>;
  any_root(params: {
    id: string;
  } | {
    name: string;
  }): Promise<unknown>;
  bool_schema(): Promise<unknown>;
};
