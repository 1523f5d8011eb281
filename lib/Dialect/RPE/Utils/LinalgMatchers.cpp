//===- LinalgMatchers.cpp - matching front-end linalg code ----------------===//

#include "rpe/Dialect/RPE/Utils/LinalgMatchers.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

Attribute mlir::rpe::constantElement(Attribute tensor, int64_t flat) {
  if (auto dense = dyn_cast<DenseElementsAttr>(tensor)) {
    if (flat < 0 || flat >= dense.getNumElements())
      return {};
    return dense.getValues<Attribute>()[flat];
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(tensor);
  if (!resource)
    return {};
  Type elem = resource.getType().getElementType();
  auto read = [&](auto attr) -> Attribute {
    if (!attr)
      return {};
    auto values = attr.tryGetAsArrayRef();
    if (!values || flat < 0 || flat >= static_cast<int64_t>(values->size()))
      return {};
    auto value = (*values)[flat];
    if (isa<FloatType>(elem))
      return FloatAttr::get(elem, static_cast<double>(value));
    return IntegerAttr::get(elem, static_cast<int64_t>(value));
  };
  if (Attribute a = read(dyn_cast<DenseI64ResourceElementsAttr>(resource)))
    return a;
  if (Attribute a = read(dyn_cast<DenseI32ResourceElementsAttr>(resource)))
    return a;
  if (Attribute a = read(dyn_cast<DenseF32ResourceElementsAttr>(resource)))
    return a;
  return read(dyn_cast<DenseF64ResourceElementsAttr>(resource));
}

std::optional<SmallVector<float>> mlir::rpe::constantF32Vector(Value v) {
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() != 1 || !type.getElementType().isF32())
    return std::nullopt;
  SmallVector<float> values;
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    auto element = dyn_cast_or_null<FloatAttr>(constantElement(attr, i));
    if (!element)
      return std::nullopt;
    values.push_back(static_cast<float>(element.getValueAsDouble()));
  }
  return values;
}
