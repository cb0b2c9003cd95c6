#!/usr/bin/env python3
"""A FastAPI application for lunet's OpenAPI tests (issue 38): FastAPI serves the OpenAPI 3.1
document it generates at /openapi.json, with operations of every parameter kind (path, query,
header, cookie, JSON bodies), two security schemes, and a few planted faults that
`lunet api --check` must find:

  GET  /faults/crash         a 500 when `n` is 100, its declared maximum (an off-by-one)
  GET  /faults/bad-shape     a response that breaks its declared schema when `n` is odd
  POST /faults/lenient       declares a strict body but accepts anything (a forbidden request
                             answered 2xx)

Run by the tests' virtual environment's python (fastapi, uvicorn: scripts/requirements-test.txt).
It listens on 127.0.0.1 on a port the kernel picks and prints that port on its first line.
"""
import socket
import sys
from enum import Enum
from typing import List, Optional

import uvicorn
from fastapi import Body, Cookie, Depends, FastAPI, Header, HTTPException, Query, Request, Response
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

app = FastAPI(title="lunet test shop", version="1.0.0")

TOKEN = "t0ken-for-tests"
API_KEY = "k3y-for-tests"


class Tag(str, Enum):
    a = "a"
    b = "b"
    c = "c"


class NewItem(BaseModel):
    name: str = Field(min_length=1, max_length=40)
    price: float = Field(gt=0, le=10000)
    tags: List[Tag] = []


class Item(NewItem):
    id: int


ITEMS = {1: Item(id=1, name="first", price=2.5, tags=[Tag.a]), 2: Item(id=2, name="second", price=10, tags=[Tag.b])}


@app.get("/items", response_model=List[Item], operation_id="listItems", summary="Items, filtered")
def list_items(limit: int = Query(10, ge=1, le=100), tag: Optional[Tag] = None):
    found = [i for i in ITEMS.values() if tag is None or tag in i.tags]
    return found[:limit]


@app.get("/items/{item_id}", response_model=Item, operation_id="getItem", summary="One item",
         responses={404: {"description": "No such item"}})
def get_item(item_id: int, verbose: bool = False, x_request_id: Optional[str] = Header(None),
             session: Optional[str] = Cookie(None), response: Response = None):
    if item_id not in ITEMS:
        raise HTTPException(status_code=404, detail="no such item")
    if x_request_id:
        response.headers["X-Request-Id"] = x_request_id
    if session:
        response.headers["X-Session-Seen"] = session
    return ITEMS[item_id]


@app.post("/items", response_model=Item, status_code=201, operation_id="createItem", summary="A new item")
def create_item(item: NewItem):
    new_id = max(ITEMS) + 1
    ITEMS[new_id] = Item(id=new_id, **item.model_dump())
    return ITEMS[new_id]


@app.delete("/items/{item_id}", status_code=204, operation_id="deleteItem")
def delete_item(item_id: int):
    if item_id not in ITEMS:
        raise HTTPException(status_code=404, detail="no such item")
    if item_id > 2:   # the two first items stay: other tests read them
        del ITEMS[item_id]
    return Response(status_code=204)


bearer = HTTPBearer()
api_key = APIKeyHeader(name="X-API-Key")


@app.get("/secure/me", operation_id="whoAmI")
def who_am_i(cred: HTTPAuthorizationCredentials = Depends(bearer)):
    if cred.credentials != TOKEN:
        raise HTTPException(status_code=401, detail="bad token")
    return {"user": "tester"}


@app.get("/secure/key", operation_id="withKey")
def with_key(key: str = Depends(api_key)):
    if key != API_KEY:
        raise HTTPException(status_code=401, detail="bad key")
    return {"key": "ok"}


class Count(BaseModel):
    n: int


@app.get("/faults/crash", response_model=Count, operation_id="crashAtMaximum")
def crash(n: int = Query(..., ge=0, le=100)):
    if n == 100:
        raise RuntimeError("planted fault: the maximum")
    return Count(n=n)


@app.get("/faults/bad-shape", response_model=Count, operation_id="badShape")
def bad_shape(n: int = Query(..., ge=0, le=100)):
    if n % 2 == 1:
        # Bypasses the response model: a string where the schema says integer.
        return Response(content='{"n": "odd"}', media_type="application/json")
    return Count(n=n)


@app.post("/faults/lenient", operation_id="lenient",
          openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": {
              "type": "object", "required": ["qty"], "additionalProperties": False,
              "properties": {"qty": {"type": "integer", "minimum": 1, "maximum": 5}}}}}}})
async def lenient(request: Request):
    await request.body()   # read, never checked: a forbidden body is answered 200
    return {"ok": True}


def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0))
    sock.listen(128)   # before the port is printed: a test may connect at once (the backlog holds it)
    print(sock.getsockname()[1], flush=True)
    # critical: the planted 500's traceback is expected, not news for the test's output
    config = uvicorn.Config(app, log_level="critical", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
