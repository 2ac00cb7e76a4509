declare const memory: {
  /** Create multiple new entities in the knowledge graph */
  create_entities(params: {
    entities: {
      /** The name of the entity */
      name: string;
      /** The type of the entity */
      entityType: string;
      /** An array of observation contents associated with the entity */
      observations: string[];
    }[];
  }): Promise<{
    entities: {
      /** The name of the entity */
      name: string;
      /** The type of the entity */
      entityType: string;
      /** An array of observation contents associated with the entity */
      observations: string[];
    }[];
  }>;
  /** Delete multiple entities and their associated relations from the knowledge graph */
  delete_entities(params: {
    /** An array of entity names to delete */
    entityNames: string[];
  }): Promise<{
    success: boolean;
    message: string;
  }>;
  /** Read the entire knowledge graph */
  read_graph(): Promise<{
    entities: {
      /** The name of the entity */
      name: string;
      /** The type of the entity */
      entityType: string;
      /** An array of observation contents associated with the entity */
      observations: string[];
    }[];
    relations: {
      /** The name of the entity where the relation starts */
      from: string;
      /** The name of the entity where the relation ends */
      to: string;
      /** The type of the relation */
      relationType: string;
    }[];
  }>;
  /** Search for nodes in the knowledge graph based on a query */
  search_nodes(params: {
    /** The search query to match against entity names, types, and observation content */
    query: string;
  }): Promise<{
    entities: {
      /** The name of the entity */
      name: string;
      /** The type of the entity */
      entityType: string;
      /** An array of observation contents associated with the entity */
      observations: string[];
    }[];
    relations: {
      /** The name of the entity where the relation starts */
      from: string;
      /** The name of the entity where the relation ends */
      to: string;
      /** The type of the relation */
      relationType: string;
    }[];
  }>;
};
