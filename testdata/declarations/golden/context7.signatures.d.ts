declare const context7: {
  "resolve-library-id"(params: {
    query: string;
    libraryName: string;
  }): Promise<unknown>;
  resolve_library_id: (typeof context7)["resolve-library-id"];
  "query-docs"(params: {
    libraryId: string;
    query: string;
  }): Promise<unknown>;
  query_docs: (typeof context7)["query-docs"];
};
