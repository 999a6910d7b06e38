"""The request/response protocol: operations, schemas, the socket server and client."""
